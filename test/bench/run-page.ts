/**
 * What a big run costs its page: a run of SPANS spans (nodes holding LLM calls and tool calls, 2 events each) is
 * ingested through the batch API of an embedded server, then GET /dashboard/{run} and GET /api/runs/{run}/spans are
 * timed, warm, median of 5, and the trace view's first page of the tree
 * (GET /dashboard/{run}/tree); then a live page's update after one more LLM call: the tree read whole, and only what
 * changed since its cursor.
 *
 * Then another tenant's GET /api/runs is timed (BENCH_SAMPLES times, 100) alone and while 4 readers of the big run's spans and text search run
 * (p50 / p99): what one tenant's heavy reads cost everyone else.
 *
 * Run: npm run bench:run-page   (env: BENCH_SPANS=5000, BENCH_ERROR_BYTES=0: an error of that many bytes on
 * every span's end event; BENCH_SPANS=20000 BENCH_ERROR_BYTES=10240 is a 200 MiB run). Embedded, or scale mode when
 * DATABASE_URL, KAFKA_BROKERS, REDIS_URL and CLICKHOUSE_URL are set (deploy/services.sh up).
 */
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { CookieJar, csrfFrom, json, startTestServer, waitForRun } from "../e2e/harness.js";

const SPANS = Number(process.env.BENCH_SPANS ?? 5_000);
const ERROR_BYTES = Number(process.env.BENCH_ERROR_BYTES ?? 0);
const error = ERROR_BYTES > 0 ? { error: "E".repeat(ERROR_BYTES) } : {};
// Scale mode when the servers are named in the environment (deploy/services.sh up), on a topic and database of its own.
const servers = Object.fromEntries(["DATABASE_URL", "KAFKA_BROKERS", "REDIS_URL", "CLICKHOUSE_URL"].flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])));
const own: Record<string, string> = Object.keys(servers).length ? { KAFKA_TOPIC: `runwatch.bench.runpage.${Date.now()}`, CLICKHOUSE_DATABASE: `runwatch_bench_runpage_${Date.now()}` } : {};
console.log(`mode: ${Object.keys(servers).length ? `scale (${Object.keys(servers).join(", ")})` : "embedded"}`);
const srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { ...servers, ...own, RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000", RUNWATCH_EVENT_QUOTA_PER_MINUTE: "0", LOG_LEVEL: "error" } });
const acct = await srv.account();
const id = "big-run";
const t0 = Date.now() - 3_600_000;
const at = (ms: number) => new Date(t0 + ms).toISOString();

// 1 run_start, then nodes of 9 children (6 LLM calls, 3 tool calls), every span a start and an end event.
const events: Record<string, unknown>[] = [{ sdk_run_id: id, event_type: "run_start", agent_name: "big", occurred_at: at(0), payload: {} }];
let made = 0;
for (let n = 0; made < SPANS; n++) {
  const node = `node-${n}`;
  const base = n * 10_000;
  events.push({ sdk_run_id: id, event_type: "step", span_id: node, occurred_at: at(base), payload: { node_name: "agent", phase: "start" } });
  made++;
  for (let c = 0; c < 9 && made < SPANS; c++, made++) {
    const sid = `${node}-${c}`;
    const llm = c % 3 !== 2;
    const type = llm ? "step" : "tool_call";
    const name = llm ? { node_name: "ChatOpenAI", kind: "llm" } : { tool_name: "search" };
    events.push({ sdk_run_id: id, event_type: type, span_id: sid, parent_span_id: node, occurred_at: at(base + c * 1000 + 1), payload: { ...name, phase: "start", ...(llm ? { input: [{ role: "user", content: "q".repeat(200) }] } : { input_preview: "query" }) } });
    events.push({ sdk_run_id: id, event_type: type, span_id: sid, parent_span_id: node, occurred_at: at(base + c * 1000 + 900), payload: { ...name, phase: "end", duration_ms: 899, ...error, ...(llm ? { model: "gpt-4o-mini", provider: "openai", prompt_tokens: 300, completion_tokens: 40, output: "a".repeat(200) } : { output_preview: "result" }) } });
  }
  events.push({ sdk_run_id: id, event_type: "step", span_id: node, occurred_at: at(base + 9_500), payload: { node_name: "agent", phase: "end", duration_ms: 9_500 } });
}
const tIngest = performance.now();
// Batches of at most 1,000 events and ~900 KiB (the default body limit is 1 MiB).
for (let i = 0; i < events.length; ) {
  let end = i;
  for (let bytes = 0; end < events.length && end - i < 1000 && bytes < 900 * 1024; end++) bytes += JSON.stringify(events[end]).length;
  const r = await fetch(`${srv.url}/api/ingest/batch`, json(acct.key, { events: events.slice(i, end) }));
  if (r.status !== 207) throw new Error(`ingest answered ${r.status}`);
  i = end;
}
await waitForRun(srv.url, acct.key, id, (b) => b.run.event_count === events.length, 120_000);
const ingestMs = performance.now() - tIngest;

const jar = new CookieJar();
const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/login`)).text());
await jar.form(`${srv.url}/login`, { _csrf: csrf, email: acct.email, password: "correct horse battery" });

/**
 * Times a read: wall time (median of 5 after a warm-up), and the CPU the process spent per request (the server runs
 * in it, chDB's threads included) — a figure that other work on the machine moves far less than the wall time.
 */
async function time(label: string, get: () => Promise<Response>): Promise<void> {
  const ms: number[] = [];
  let bytes = 0;
  let cpuMs = 0;
  for (let i = 0; i < 6; i++) {
    const c0 = process.cpuUsage();
    const t = performance.now();
    const res = await get();
    const body = await res.text();
    if (res.status !== 200) throw new Error(`${label}: ${res.status}`);
    const c = process.cpuUsage(c0);
    if (i > 0) {
      ms.push(performance.now() - t); // the first is the warm-up
      cpuMs += (c.user + c.system) / 1000;
    }
    bytes = body.length;
  }
  ms.sort((a, b) => a - b);
  console.log(`${label}: median ${ms[2]!.toFixed(0)} ms, max ${ms.at(-1)!.toFixed(0)} ms, CPU ${(cpuMs / ms.length).toFixed(0)} ms a request, ${(bytes / 1024).toFixed(0)} KiB`);
}

console.log(`run of ${SPANS} spans (${events.length} events) ingested and stored in ${(ingestMs / 1000).toFixed(1)} s`);
await time("GET /dashboard/{run} (the page; it starts the tree's read)", () => jar.fetch(`${srv.url}/dashboard/${id}`));
await time("GET /dashboard/{run}/tree (its first 300 spans)", () => jar.fetch(`${srv.url}/dashboard/${id}/tree?limit=300`));
await time("GET /api/runs/{run}/spans (first 1,000)", () => fetch(`${srv.url}/api/runs/${id}/spans`, { headers: { authorization: `Bearer ${acct.key}` } }));

// A live page's update after one more LLM call: the tree read again whole (every page of it) and only the spans that
// changed since the page's cursor (web/runs/trace-reads.ts).
const first = (await (await jar.fetch(`${srv.url}/dashboard/${id}/tree?limit=1`)).json()) as { cursor: string; n: number };
const last = `node-${Math.floor((SPANS - 1) / 10)}`;
const call = (phase: string, ms: number, extra: Record<string, unknown> = {}) =>
  ({ sdk_run_id: id, event_type: "step", span_id: "live-call", parent_span_id: last, occurred_at: at(ms), payload: { node_name: "ChatOpenAI", kind: "llm", phase, ...extra } });
await fetch(`${srv.url}/api/ingest/batch`, json(acct.key, { events: [call("start", 1), call("end", 2, { model: "gpt-4o-mini", prompt_tokens: 10, completion_tokens: 1 })] }));
await waitForRun(srv.url, acct.key, id, (b) => b.run.event_count === events.length + 2);
await time("live update after one LLM call, the tree whole", () => jar.fetch(`${srv.url}/dashboard/${id}/tree?limit=20000`));
await time("live update after one LLM call, only what changed", () => jar.fetch(`${srv.url}/dashboard/${id}/tree?since=${first.cursor}&n=${first.n}`));

// Another tenant's list of runs, alone and beside 4 readers of the big run.
const other = await srv.account();
await fetch(`${srv.url}/api/ingest`, json(other.key, { sdk_run_id: "small", event_type: "run_start", agent_name: "small", payload: {} }));
await waitForRun(srv.url, other.key, "small", () => true);
const pct = (ms: number[], p: number) => [...ms].sort((a, b) => a - b)[Math.min(ms.length - 1, Math.floor(ms.length * p))]!;
async function othersReads(n: number): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const r = await fetch(`${srv.url}/api/runs?limit=20`, { headers: { authorization: `Bearer ${other.key}` } });
    await r.arrayBuffer();
    ms.push(performance.now() - t);
  }
  return ms;
}
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 100);
const alone = await othersReads(SAMPLES);
let heavy = true;
const readers = Array.from({ length: 4 }, async (_, i) => {
  while (heavy) {
    const r = i % 2 ? await jar.fetch(`${srv.url}/dashboard/${id}/search?q=result`) : await fetch(`${srv.url}/api/runs/${id}/spans?limit=1`, { headers: { authorization: `Bearer ${acct.key}` } });
    await r.arrayBuffer();
  }
});
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
const beside = await othersReads(SAMPLES);
loopDelay.disable();
heavy = false;
await Promise.all(readers);
console.log(`another tenant's GET /api/runs: alone p50 ${pct(alone, 0.5).toFixed(0)} ms, p99 ${pct(alone, 0.99).toFixed(0)} ms; beside 4 heavy readers p50 ${pct(beside, 0.5).toFixed(0)} ms, p90 ${pct(beside, 0.9).toFixed(0)} ms, p99 ${pct(beside, 0.99).toFixed(0)} ms (${beside.filter((x) => x > 300).length} of ${beside.length} over 300 ms); the event loop's delay meanwhile p99 ${(loopDelay.percentile(99) / 1e6).toFixed(0)} ms, max ${(loopDelay.max / 1e6).toFixed(0)} ms`);
console.log(`RSS ${(process.memoryUsage().rss / 1024 / 1024).toFixed(0)} MB`);
await srv.close();
process.exit(0);

/**
 * End to end, as a newcomer runs it: `npm run bench:e2e`.
 *
 * `runwatch start` (every role, embedded default) as a child process on a fresh data dir, then again on that data dir:
 * time from spawn to serving (/healthz answers), idle RSS of the whole process tree. Then a burst of realistic events
 * (runs of 100 events of ~460 bytes with 150-character outputs). First a steady load: BENCH_STEADY_RATE events/s
 * (default 10,000) as batches of 100 every 10 ms for BENCH_STEADY_S seconds (default 30; 0 skips it), 50 runs in progress
 * at a time: the process tree's RSS (median and max, sampled every 250 ms after the first 5 s), whether ingest kept the
 * pace, and how long after the last ack every event is visible. Then a burst, BENCH_BATCHES batches of 500 over 8
 * connections: acknowledged events/s, the time until every event is visible through the API (every run's event_count),
 * end to end events/s (first batch sent → all visible) and peak RSS. Last, in this process, chDB alone inserts the same rows
 * (the rows the pipeline writes, JSONCompactEachRow, 5,000-row inserts) into a fresh data dir: the ceiling end to end is
 * compared with. The issue's targets (2 cores) are printed next to each figure.
 *
 * BENCH_EVALUATION_RULE=1 runs the same with an online evaluation rule on (an LLM judge of BENCH_EVALUATION_SAMPLING of the
 * runs, default 0.1, answering in 200 ms from a fake OpenAI server on loopback, the server's evaluation worker on): its
 * figures next to a run without are what a rule costs the pipeline (BENCH_EVALUATION_WORKER=0: the rule's jobs made but
 * not run, what the plugin alone costs).
 *
 * BENCH_RULES=anomaly,slo (either or both) makes the sweeping alert rules a team would have before the load: an anomaly
 * rule per metric and an SLO with its burn-rate rule on the bench agent, which is first given a history through ingest
 * (test/bench/e2e-rules.ts); the server then sweeps them every 15 s, with the roll-up, during the load. The bench waits
 * one sweep (16 s) before the load, and at the end reads from the data dir what the sweep wrote. Its figures next to a
 * run without are what the rules cost the pipeline.
 *
 * Env: BENCH_BATCHES (default 200), BENCH_STEADY_RATE, BENCH_STEADY_S, BENCH_IDLE_S (seconds of idle before RSS is read, default 10),
 * BENCH_SERVER_NODE_ARGS (node flags for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"),
 * BENCH_LOG_LEVEL (server log level; "debug" prints the pipeline's per-batch stage timings).
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { openChdb } from "../../core/clickhouse/chdb.js";
import { toChTime } from "../../stores/runs/event-store.js";
import { migrateClickHouse } from "../../core/clickhouse/migrate.js";
import { encodeRows } from "../../core/clickhouse/settings.js";
import type { EncodedRows } from "../../core/ports/clickhouse.js";
import { runIdFor, uuidv7 } from "../../core/ids.js";
import { ensureBuilt } from "../../deploy/build.mjs";
import { childServerEnv, runwatchCli } from "../e2e/harness.js";
import { pipelineCountersLine } from "./live-server.js";
import { quantile } from "./paced-client.js";
import { startFakeLlm, type FakeLlm } from "../../clients/js/test/fake-llm.js";
import { evaluatedRules, makeBenchRules, ruleKinds } from "./e2e-rules.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "deploy/bin/runwatch.mjs");
const BATCHES = Number(process.env.BENCH_BATCHES ?? 200);
const BATCH_SIZE = 500;
const RUN_LENGTH = 100;
const CONNECTIONS = 8;
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 10);
const CHDB_INSERT_ROWS = 5_000;
const STEADY_RATE = Number(process.env.BENCH_STEADY_RATE ?? 10_000);
const STEADY_S = Number(process.env.BENCH_STEADY_S ?? 30);
const STEADY_BATCH = 100;
const STEADY_RUNS_IN_PROGRESS = 50;

/** Resident memory of a process and all its descendants (Linux /proc), in MiB. */
async function treeRssMiB(pid: number): Promise<number> {
  let kb = 0;
  const visit = async (p: number) => {
    const status = await fs.readFile(`/proc/${p}/status`, "utf8").catch(() => "");
    kb += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    const children = await fs.readFile(`/proc/${p}/task/${p}/children`, "utf8").catch(() => "");
    for (const c of children.split(" ").filter(Boolean)) await visit(Number(c));
  };
  await visit(pid);
  return kb / 1024;
}

async function startServer(env: NodeJS.ProcessEnv, url: string): Promise<{ child: ChildProcess; ms: number }> {
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? "").split(/\s+/).filter(Boolean);
  const t0 = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, BIN, "start"], { cwd: ROOT, env, stdio: ["ignore", process.env.BENCH_LOG_LEVEL ? "inherit" : "ignore", "inherit"] });
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) return { child, ms: performance.now() - t0 };
    if (performance.now() - t0 > 120_000) throw new Error("the server did not start within 120 s");
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
}

const OUTPUT = "LangGraph 1.x adds durable execution, interrupts for human-in-the-loop review, and streaming of tokens and node updates; this output is 150 chars.".slice(0, 150);

/** Event `i` (0..99) of run `run`: a start, tool calls, LLM calls and steps with 150-character outputs, an end. */
function realisticEvent(run: number, i: number): Record<string, unknown> {
  const sdk_run_id = `e2e-run-${run}`;
  if (i === 0) return { event_type: "run_start", sdk_run_id, agent_name: "research-agent", payload: { input: { question: "What changed in LangGraph 1.0?" } } };
  if (i === RUN_LENGTH - 1) return { event_type: "run_end", sdk_run_id, payload: { output: { answer: OUTPUT } } };
  switch (i % 3) {
    case 0:
      return { event_type: "tool_call", sdk_run_id, payload: { tool_name: "web_search", phase: "end", input_preview: `query ${i}: langgraph release notes`, output_preview: OUTPUT, duration_ms: 120 + i } };
    case 1:
      return { event_type: "step", sdk_run_id, span_id: `s${i}`, payload: { node_name: "call_model", kind: "llm", phase: "end", model: "gpt-4o-mini", provider: "openai", prompt_tokens: 812, completion_tokens: 96, duration_ms: 640, output: OUTPUT } };
    default:
      return { event_type: "step", sdk_run_id, payload: { node_name: "plan", phase: "end", output_preview: OUTPUT, duration_ms: 15 } };
  }
}

function batchBodies(firstRun: number): Uint8Array<ArrayBuffer>[] {
  const events = Array.from({ length: BATCHES * BATCH_SIZE }, (_, n) => realisticEvent(firstRun + Math.floor(n / RUN_LENGTH), n % RUN_LENGTH));
  return Array.from({ length: BATCHES }, (_, b) => new TextEncoder().encode(JSON.stringify({ events: events.slice(b * BATCH_SIZE, (b + 1) * BATCH_SIZE) })));
}

/** Sums event_count over every run (all pages). */
async function storedEvents(url: string, key: string): Promise<number> {
  let total = 0;
  let cursor: string | null = null;
  do {
    const res = await fetch(`${url}/api/runs?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, { headers: { authorization: `Bearer ${key}` } });
    const page = (await res.json()) as { runs: { event_count: number }[]; next_cursor: string | null };
    total += page.runs.reduce((n, r) => n + r.event_count, 0);
    cursor = page.next_cursor;
  } while (cursor);
  return total;
}

/** chDB alone: the rows the pipeline would write for the same events, inserted 5,000 at a time; rows/s. */
async function rawChdbRowsPerSecond(bodies: readonly Uint8Array[]): Promise<number> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-bench-chdb-"));
  const ch = await openChdb(dir, "runwatch");
  try {
    await migrateClickHouse(ch);
    const now = toChTime(new Date().toISOString());
    const rows = bodies.flatMap((b) => (JSON.parse(new TextDecoder().decode(b)) as { events: Record<string, unknown>[] }).events).map((e) => ({
      event_id: uuidv7(), user_id: 1, run_id: runIdFor(1, e.sdk_run_id as string), sdk_run_id: e.sdk_run_id, event_type: e.event_type,
      agent_name: e.agent_name ?? "", payload: JSON.stringify(e.payload), occurred_at: now, received_at: now, config_version: null, span_id: "", parent_span_id: "",
    }));
    const chunks: EncodedRows[] = [];
    for (let i = 0; i < rows.length; i += CHDB_INSERT_ROWS) chunks.push(await encodeRows(rows.slice(i, i + CHDB_INSERT_ROWS)));
    const t0 = performance.now();
    for (const c of chunks) await ch.insertEncoded("agent_events", c);
    return rows.length / ((performance.now() - t0) / 1000);
  } finally {
    await ch.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** When the API shows at least `events` stored events (performance.now()); throws 120 s after `lastAck` without. */
async function visibleAt(url: string, key: string, events: number, lastAck: number, phase: string): Promise<number> {
  while (performance.now() - lastAck < 120_000) {
    if ((await storedEvents(url, key)) >= events) return performance.now();
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${phase}: not every event was visible 120 s after the last acknowledgement`);
}

/** Event n of the steady stream: STEADY_RUNS_IN_PROGRESS runs advance together (each batch carries two events of each). */
function steadyEvent(n: number): Record<string, unknown> {
  const perGroup = STEADY_RUNS_IN_PROGRESS * RUN_LENGTH;
  const run = Math.floor(n / perGroup) * STEADY_RUNS_IN_PROGRESS + (n % STEADY_RUNS_IN_PROGRESS);
  return realisticEvent(run, Math.floor((n % perGroup) / STEADY_RUNS_IN_PROGRESS));
}

/**
 * The steady target (docs/BENCHMARKS.md): ≤ 600 MB at 10,000 events/s; and whether the pipeline keeps up at that rate. `stored`:
 * the events stored before it. Returns the events sent.
 */
async function steadyPhase(url: string, key: string, pid: number, stored: number): Promise<number> {
  const batches = Math.round((STEADY_RATE * STEADY_S) / STEADY_BATCH);
  const intervalMs = (1000 * STEADY_BATCH) / STEADY_RATE;
  const samples: number[] = [];
  const t0 = performance.now();
  const sampler = setInterval(() => {
    if (performance.now() - t0 >= 5_000) void treeRssMiB(pid).then((m) => samples.push(m));
  }, 250);
  let lastAck = 0;
  let late = 0;
  const inflight = new Set<Promise<void>>();
  for (let b = 0; b < batches; b++) {
    const due = t0 + b * intervalMs;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    else if (wait < -intervalMs) late++;
    const events = Array.from({ length: STEADY_BATCH }, (_, i) => steadyEvent(b * STEADY_BATCH + i));
    const p = fetch(`${url}/api/ingest/batch`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ events }) })
      .then(async (res) => {
        const text = await res.text();
        if (res.status !== 207 || !text.startsWith(`{"accepted":${STEADY_BATCH},"rejected":0`)) throw new Error(`steady batch answered ${res.status}: ${text.slice(0, 500)}`);
        lastAck = performance.now();
      });
    inflight.add(p);
    void p.finally(() => inflight.delete(p)).catch(() => {});
  }
  await Promise.all(inflight);
  const sent = (lastAck - t0) / 1000;
  const total = batches * STEADY_BATCH;
  const visible = await visibleAt(url, key, stored + total, lastAck, "steady phase").finally(() => clearInterval(sampler));
  const rss = samples.length > 0 ? quantile([...samples].sort((a, b) => a - b), 0.5) : NaN; // NaN: a phase under 5 s has no sample
  console.log(`steady: ${STEADY_RATE} events/s offered for ${STEADY_S} s (batches of ${STEADY_BATCH}, ${STEADY_RUNS_IN_PROGRESS} runs in progress): ${Math.round((batches * STEADY_BATCH) / sent)} events/s acknowledged, ${late} batches sent late`);
  console.log(`  RSS (process tree): median ${rss.toFixed(0)} MiB, max ${Math.max(...samples).toFixed(0)} MiB (target ≤ 600 MB at 10,000 events/s: ${verdict(rss * 1.048576 <= 600)})`);
  console.log(`  all visible ${((visible - lastAck) / 1000).toFixed(2)} s after the last ack`);
  return total;
}

const BENCH_PASSWORD = "bench password 123";
const verdict = (ok: boolean) => (ok ? "met" : "NOT met");

const EVALUATION_RULE = process.env.BENCH_EVALUATION_RULE === "1";
const EVALUATION_SAMPLING = Number(process.env.BENCH_EVALUATION_SAMPLING ?? 0.1);
const RULES = ruleKinds(process.env.BENCH_RULES);
const AGENT = "research-agent";

/** An LLM-judge evaluator and a rule judging EVALUATION_SAMPLING of the bench agent's runs. Returns the evaluator's id. */
async function evaluationRule(url: string, key: string): Promise<string> {
  const post = async (p: string, body: unknown) => (await fetch(`${url}${p}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) })).json() as Promise<any>;
  const evaluator = (await post("/api/evaluators", { name: "helpfulness", type: "llm_judge", provider: "openai", prompt: "Is {{output}} helpful for {{input}}?", output: { type: "numeric", min: 0, max: 1 } })).evaluator;
  await post("/api/evaluation-rules", { evaluator_id: evaluator.id, filter: { agent_name: "research-agent" }, sampling: EVALUATION_SAMPLING });
  return evaluator.id as string;
}

async function main() {
  await ensureBuilt(); // the start times below are the server's, not a first build's
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-bench-e2e-"));
  const judge: FakeLlm | undefined = EVALUATION_RULE ? await startFakeLlm(200) : undefined;
  const { env, url } = await childServerEnv(dataDir, {
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warn", RUNWATCH_OTLP_GRPC_PORT: "off", RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000000", RUNWATCH_EVENT_QUOTA_PER_MINUTE: "0", SESSION_SECRET: "bench-".padEnd(64, "x"),
    ...(judge ? { RUNWATCH_EVALUATION_CONCURRENCY: process.env.BENCH_EVALUATION_WORKER === "0" ? "0" : "8", OPENAI_BASE_URL: judge.url, OPENAI_API_KEY: "sk-bench", RUNWATCH_EVALUATION_CALLS_PER_MINUTE: "100000", RUNWATCH_EVALUATION_DAILY_BUDGET_USD: "1000" } : {}),
  });
  let server: ChildProcess | undefined;
  try {
    console.log(`Runwatch end-to-end bench: embedded default (every role in one process), ${os.availableParallelism()} cores, node ${process.version}`);
    const first = await startServer(env, url);
    server = first.child;
    await stopServer(server);
    const again = await startServer(env, url);
    server = again.child;
    console.log(`start to serving: first start ${(first.ms / 1000).toFixed(2)} s (target ≤ 6 s: ${verdict(first.ms <= 6000)}), existing data dir ${(again.ms / 1000).toFixed(2)} s (target ≤ 3 s: ${verdict(again.ms <= 3000)})`);
    await new Promise((r) => setTimeout(r, IDLE_S * 1000));
    const idle = await treeRssMiB(server.pid!);
    console.log(`idle RSS (process tree, after ${IDLE_S} s): ${idle.toFixed(0)} MiB (target ≤ 300 MiB: ${verdict(idle <= 300)})`);

    runwatchCli({ ...env, RUNWATCH_PASSWORD: BENCH_PASSWORD }, "user", "create", "--email", "e2e@example.com", "--name", "Bench");
    const key = runwatchCli(env, "key", "create", "--email", "e2e@example.com", "--name", "bench").match(/[0-9a-f]{64}/)![0];
    const evaluatorId = judge ? await evaluationRule(url, key) : undefined;
    if (evaluatorId) console.log(`evaluation rule on: an LLM judge of ${EVALUATION_SAMPLING * 100}% of the runs, answering in 200 ms`);
    let seeded = 0;
    if (RULES.length > 0) {
      const made = await makeBenchRules({ url, key, email: "e2e@example.com", password: BENCH_PASSWORD, agent: AGENT, kinds: RULES });
      seeded = made.events;
      console.log(made.words);
      await new Promise((r) => setTimeout(r, 16_000)); // one sweep before the load: the roll-up of the history, the SLO's burn
    }
    // The steady load first, on the server as it idles: after the burst its heaps are still the burst's.
    const steadyEvents = STEADY_S > 0 ? await steadyPhase(url, key, server.pid!, seeded) : 0;
    const steadyRuns = Math.ceil(steadyEvents / (STEADY_RUNS_IN_PROGRESS * RUN_LENGTH)) * STEADY_RUNS_IN_PROGRESS;
    const bodies = batchBodies(steadyRuns);
    const total = BATCHES * BATCH_SIZE;
    const avgBytes = bodies.reduce((n, b) => n + b.length, 0) / total;

    let peak = idle;
    const sampler = setInterval(() => void treeRssMiB(server!.pid!).then((m) => (peak = Math.max(peak, m))), 100);
    const t0 = performance.now();
    let next = 0;
    let lastAck = 0;
    await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        const res = await fetch(`${url}/api/ingest/batch`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body });
        const text = await res.text();
        if (res.status !== 207 || !text.startsWith(`{"accepted":${BATCH_SIZE},"rejected":0`)) throw new Error(`batch answered ${res.status}: ${text.slice(0, 500)}`);
        lastAck = performance.now();
      }
    }));
    const visible = await visibleAt(url, key, seeded + steadyEvents + total, lastAck, "burst").finally(() => clearInterval(sampler));
    peak = Math.max(peak, await treeRssMiB(server.pid!));
    const ackRate = total / ((lastAck - t0) / 1000);
    const e2eRate = total / ((visible - t0) / 1000);
    const lag = visible - lastAck;
    console.log(`burst: ${BATCHES} batches of ${BATCH_SIZE} (${total} events, ${avgBytes.toFixed(0)} B each) over ${CONNECTIONS} connections`);
    console.log(`  acknowledged: ${Math.round(ackRate)} events/s (all in ${((lastAck - t0) / 1000).toFixed(2)} s)`);
    console.log(`  all visible ${(lag / 1000).toFixed(2)} s after the last ack (target ≤ 1 s: ${verdict(lag <= 1000)})`);
    console.log(`  end to end: ${Math.round(e2eRate)} events/s (first batch sent → all visible)`);
    console.log(`  peak RSS: ${peak.toFixed(0)} MiB`);
    const counters = await pipelineCountersLine(url);
    if (counters) console.log(`  ${counters}`);
    if (evaluatorId) {
      const totals = ((await (await fetch(`${url}/api/evaluators/${evaluatorId}`, { headers: { authorization: `Bearer ${key}` } })).json()) as { totals: Record<string, number> }).totals;
      console.log(`  evaluation: ${totals.done} runs judged, ${totals.pending + totals.retrying} waiting, ${totals.failed} errors when the burst was visible`);
    }
    await stopServer(server);
    server = undefined;
    if (RULES.length > 0) console.log(`  rules: ${await evaluatedRules(env, AGENT)}`);

    const raw = await rawChdbRowsPerSecond(bodies);
    const ratio = e2eRate / raw;
    console.log(`chDB alone, the same rows (JSONCompactEachRow, ${CHDB_INSERT_ROWS}-row inserts): ${Math.round(raw)} rows/s`);
    console.log(`end to end / chDB alone: ${(ratio * 100).toFixed(0)} % (target ≥ 33 %: ${verdict(ratio >= 1 / 3)})`);
    console.log(`bench process RSS: ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
  } finally {
    if (server) await stopServer(server);
    await judge?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await main();

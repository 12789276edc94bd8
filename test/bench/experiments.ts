/**
 * What a big experiment costs its pages: a dataset of BENCH_ITEMS items (default 10,000) and two experiments over it
 * (every item a run with an output and a score, sent through the batch API of an embedded server), then, warm,
 * median of BENCH_SAMPLES (default 7):
 *   - the comparison page of the two (/datasets/:name/compare, its first page of items, over all the results),
 *   - the same page showing only the regressed items,
 *   - GET /api/experiments/{id} (every item's result and the aggregates),
 *   - the dataset's experiments page,
 * and, as the yardstick measured in the same run, ClickHouse answering the experiment's result query alone.
 *
 * Run: npm run bench:experiments   (env: BENCH_ITEMS, BENCH_SAMPLES). Embedded, or scale mode when DATABASE_URL,
 * KAFKA_BROKERS, REDIS_URL and CLICKHOUSE_URL are set (deploy/services.sh up).
 */
import { performance } from "node:perf_hooks";
import { experimentResults } from "../../stores/datasets/experiment-results.js";
import { bearer, json, loginJar, startTestServer } from "../e2e/harness.js";

const ITEMS = Number(process.env.BENCH_ITEMS ?? 10_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 7);
const servers = Object.fromEntries(["DATABASE_URL", "KAFKA_BROKERS", "REDIS_URL", "CLICKHOUSE_URL"].flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])));
const own: Record<string, string> = Object.keys(servers).length ? { KAFKA_TOPIC: `runwatch.bench.experiments.${Date.now()}`, CLICKHOUSE_DATABASE: `runwatch_bench_experiments_${Date.now()}` } : {};
console.log(`mode: ${Object.keys(servers).length ? `scale (${Object.keys(servers).join(", ")})` : "embedded"}; ${ITEMS} items, 2 experiments`);
const srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { ...servers, ...own, RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000", RUNWATCH_EVENT_QUOTA_PER_MINUTE: "0", LOG_LEVEL: "error" } });
const acct = await srv.account();
const post = async (path: string, body: unknown) => (await fetch(`${srv.url}${path}`, json(acct.key, body))).json() as Promise<any>;

const id = (i: number) => `item-${String(i).padStart(6, "0")}`;
await post("/api/datasets", { name: "bench" });
for (let i = 0; i < ITEMS; i += 5_000) {
  const items = Array.from({ length: Math.min(5_000, ITEMS - i) }, (_, k) => ({ id: id(i + k), input: { question: `question ${i + k}: ${"q".repeat(120)}` }, expected_output: `answer ${i + k}` }));
  await post("/api/datasets/bench/items", { items });
}

const t0 = Date.now() - 3_600_000;
const at = (ms: number) => new Date(t0 + ms).toISOString();
async function experiment(name: string, wrongEvery: number): Promise<string> {
  const experimentId = (await post("/api/experiments", { dataset: "bench", name, agent_name: "bench-bot", config_version: wrongEvery })).experiment.id as string;
  for (let i = 0; i < ITEMS; i += 500) {
    const events = [];
    for (let k = i; k < Math.min(ITEMS, i + 500); k++) {
      const run = `${name}-${k}`;
      events.push(
        { event_type: "run_start", sdk_run_id: run, agent_name: "bench-bot", occurred_at: at(k), payload: { input: { question: `question ${k}` }, experiment_id: experimentId, dataset_item_id: id(k), repetition: 1 } },
        { event_type: "run_end", sdk_run_id: run, occurred_at: at(k + 200 + (k % 97)), payload: { output: k % wrongEvery === 0 ? "wrong" : `answer ${k}`, prompt_tokens: 150, completion_tokens: 20, model: "gpt-4o-mini" } },
      );
    }
    const res = await post("/api/ingest/batch", { events });
    if (res.rejected) throw new Error(JSON.stringify(res).slice(0, 500));
  }
  return experimentId;
}
const tIngest = performance.now();
const a = await experiment("baseline", 10);
const b = await experiment("candidate", 7);
// Every run stored, then its score (a score needs its run).
for (;;) {
  const body = (await (await fetch(`${srv.url}/api/experiments/${b}`, bearer(acct.key))).json()) as any;
  const first = (await (await fetch(`${srv.url}/api/experiments/${a}`, bearer(acct.key))).json()) as any;
  if (body.experiment.completed_count >= ITEMS && first.experiment.completed_count >= ITEMS) break;
  await new Promise((r) => setTimeout(r, 500));
}
const scoreRows = [a, b].flatMap((e, n) => Array.from({ length: ITEMS }, (_, k) => ({ e, run: `${n === 0 ? "baseline" : "candidate"}-${k}`, value: k % (n === 0 ? 10 : 7) === 0 ? 0 : 1 })));
for (let i = 0; i < scoreRows.length; i += 64) {
  await Promise.all(scoreRows.slice(i, i + 64).map((s) => post("/api/scores", { sdk_run_id: s.run, name: "correct", value: s.value })));
}
console.log(`setup: ${ITEMS} items, ${2 * ITEMS} runs and scores in ${((performance.now() - tIngest) / 1000).toFixed(1)} s`);

const jar = await loginJar(srv.url, acct.email);
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
async function time(label: string, fn: () => Promise<number>): Promise<number> {
  await fn(); // warm
  const ms: number[] = [];
  let bytes = 0;
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now();
    bytes = await fn();
    ms.push(performance.now() - t);
  }
  const m = median(ms);
  console.log(`${label.padEnd(58)} median ${m.toFixed(0).padStart(5)} ms  (min ${Math.min(...ms).toFixed(0)}, max ${Math.max(...ms).toFixed(0)})  ${(bytes / 1024).toFixed(0)} KiB`);
  return m;
}
const page = (path: string) => async () => {
  const res = await jar.fetch(`${srv.url}${path}`);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${text.slice(0, 300)}`);
  return text.length;
};
const raw = await time("yardstick: ClickHouse, one experiment's results (3 queries)", async () => (await experimentResults(srv.ports.clickhouse, acct.id, a)).length);
const compare = await time("comparison page, 2 experiments (first 100 items)", page(`/datasets/bench/compare?experiments=${a},${b}`));
await time("comparison page, only the regressed items", page(`/datasets/bench/compare?experiments=${a},${b}&only=regressions`));
await time("GET /api/experiments/{id} (every result)", async () => (await (await fetch(`${srv.url}/api/experiments/${a}`, bearer(acct.key))).text()).length);
await time("experiments page of the dataset", page("/datasets/bench/experiments"));
console.log(`comparison page / yardstick: ${(compare / raw).toFixed(2)}; peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
await srv.close();

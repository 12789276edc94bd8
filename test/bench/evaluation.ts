/**
 * Judge throughput (docs/EVALUATION.md): an embedded server and its evaluation worker, agents-service in front of a
 * fake OpenAI server on loopback that answers every judge call in BENCH_JUDGE_MS (default 200 ms); BENCH_RUNS ended
 * runs (default 400) judged by a backfill of an LLM-judge rule, once per worker concurrency in BENCH_CONCURRENCY
 * (default "8,32"). Printed per concurrency: judge jobs per second, and the ratio to the bound the judge's latency
 * sets (concurrency / latency), measured in the same run; then peak RSS.
 *
 * Run: npm run bench:evaluation   (env: BENCH_RUNS, BENCH_JUDGE_MS, BENCH_CONCURRENCY).
 */
import { performance } from "node:perf_hooks";
import { createLogger } from "../../core/logger.js";
import { startAgentsService } from "../../agents-service/server.js";
import { loadAgentsSettings } from "../../agents-service/settings.js";
import { startEvaluationWorker } from "../../evaluation/jobs/worker.js";
import { startFakeLlm } from "../../clients/js/test/fake-llm.js";
import { bearer, freePort, json, startTestServer } from "../e2e/harness.js";

const RUNS = Number(process.env.BENCH_RUNS ?? 400);
const JUDGE_MS = Number(process.env.BENCH_JUDGE_MS ?? 200);
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? "8,32").split(",").map(Number);
const SECRET = "bench-agent-secret-0123456789";

const llm = await startFakeLlm(JUDGE_MS);
const agentsPort = await freePort();
const srv = await startTestServer({
  pipeline: true, pipelineOptions: { maxWaitMs: 5 },
  env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000", RUNWATCH_AGENTS_URL: `http://127.0.0.1:${agentsPort}`, AGENT_SECRET: SECRET, RUNWATCH_EVALUATION_CALLS_PER_MINUTE: "100000" },
});
const agents = await startAgentsService(srv.ports.config, {
  port: agentsPort, host: "127.0.0.1", logger: createLogger("error"),
  settings: { ...loadAgentsSettings({ OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-bench" }), maxConcurrent: 64 },
});
const acct = await srv.account();
const post = async (path: string, body: unknown) => (await fetch(`${srv.url}${path}`, json(acct.key, body))).json() as Promise<any>;
const get = async (path: string) => (await fetch(`${srv.url}${path}`, bearer(acct.key))).json() as Promise<any>;

const at = new Date(Date.now() - 3_600_000).toISOString();
for (let i = 0; i < RUNS; i += 250) {
  const events = Array.from({ length: Math.min(250, RUNS - i) }, (_, k) => [
    { event_type: "run_start", sdk_run_id: `bench-${i + k}`, agent_name: "bench-bot", occurred_at: at, payload: { input: { question: `question ${i + k}` } } },
    { event_type: "run_end", sdk_run_id: `bench-${i + k}`, occurred_at: at, payload: { output: `answer ${i + k}: ${"a".repeat(300)}` } },
  ]).flat();
  await post("/api/ingest/batch", { events });
}
for (;;) {
  const r = await get(`/api/runs/bench-${RUNS - 1}`);
  if (r.run?.status === "success") break;
  await new Promise((res) => setTimeout(res, 100));
}
console.log(`mode: embedded; ${RUNS} runs, a judge answering in ${JUDGE_MS} ms`);

for (const concurrency of CONCURRENCY) {
  const evaluator = (await post("/api/evaluators", { name: `judge-${concurrency}`, type: "llm_judge", provider: "openai", prompt: "Is {{output}} right for {{input}}?", output: { type: "numeric", min: 0, max: 1 } })).evaluator;
  const rule = (await post("/api/evaluation-rules", { evaluator_id: evaluator.id, filter: { agent_name: "bench-bot" }, sampling: 1 })).rule;
  const worker = await startEvaluationWorker(srv.ports, srv.ports.config, createLogger("error"), {
    settings: { concurrency, pollMs: 20, leaseSeconds: 300, backoffMs: 1000, maxBackoffMs: 10_000 },
  });
  const t0 = performance.now();
  const started = await post(`/api/evaluation-rules/${rule.id}/backfill`, { from: new Date(Date.now() - 7_200_000).toISOString(), to: new Date().toISOString(), confirm: true });
  let totals: { done: number; failed: number } = { done: 0, failed: 0 };
  while (totals.done + totals.failed < started.queued) {
    await new Promise((r) => setTimeout(r, 250)); // the bench's own reads share Postgres with the worker: not too often
    totals = (await get(`/api/evaluators/${evaluator.id}`)).totals;
  }
  const seconds = (performance.now() - t0) / 1000;
  await worker.close();
  const perSecond = totals.done / seconds;
  const bound = concurrency / (JUDGE_MS / 1000);
  console.log(`concurrency ${concurrency}: ${totals.done} judged (${totals.failed} errors) in ${seconds.toFixed(1)} s = ${perSecond.toFixed(1)} jobs/s; the judge's latency allows ${bound.toFixed(0)}/s: ratio ${(perSecond / bound).toFixed(2)}`);
}
console.log(`peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB (this process: server, pipeline, worker, agents-service)`);
await agents.close();
await srv.close();
await llm.close();

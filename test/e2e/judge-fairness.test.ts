/**
 * One tenant's judge jobs do not starve another's (docs/EVALUATORS.md, Fair turns), over real HTTP with an LLM judge
 * served by agents-service against a fake OpenAI server on loopback that takes 40 ms an answer: a project with the
 * most rules it may have (50; the 51st is a 422) and one request of 30 runs queues 1,500 judge jobs; another
 * project's run sent while they wait is judged within a few seconds, while most of the first project's jobs are
 * still queued — not after them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../core/logger.js";
import { startEvaluationWorker, type EvaluationWorker } from "../../evaluation/jobs/worker.js";
import { SECRET, startHarness, type Harness } from "../../agents-service/test/harness.js";
import { MAX_RULES_PER_PROJECT } from "../../stores/evaluation/rule-cap.js";
import { bearer, json, startTestServer, until, type TestAccount, type TestServer } from "./harness.js";

let agents: Harness;
let srv: TestServer;
let worker: EvaluationWorker;
let busy: TestAccount;
let quiet: TestAccount;

beforeAll(async () => {
  agents = await startHarness({ llmMaxRetries: 0 });
  const answer = agents.fake.judge;
  agents.fake.judge = async (prompt) => {
    await new Promise((r) => setTimeout(r, 40));
    return answer(prompt);
  };
  srv = await startTestServer({
    pipeline: true,
    pipelineOptions: { maxWaitMs: 5 },
    env: {
      RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000", RUNWATCH_AGENTS_URL: agents.url, AGENT_SECRET: SECRET,
      // Both projects' judges use the instance's provider key (by default only projects of an instance admin may),
      // and the judge caps are high enough that no call waits for them: what orders the jobs is the queue alone.
      RUNWATCH_OPERATOR_JUDGE_KEY: "all", RUNWATCH_EVALUATION_CALLS_PER_MINUTE: "100000", RUNWATCH_EVALUATION_DAILY_BUDGET_USD: "1000",
    },
  });
  [busy, quiet] = [await srv.account(), await srv.account()];
  worker = await startEvaluationWorker(srv.ports, srv.ports.config, createLogger("error"), {
    settings: { concurrency: 8, pollMs: 50, leaseSeconds: 60, backoffMs: 100, maxBackoffMs: 300 },
    // The scale pass shares Postgres between test files: only this file's projects' jobs are this worker's.
    projects: () => [busy, quiet].filter(Boolean).map((a) => a.id),
  });
}, 60_000);
afterAll(async () => {
  await worker?.close();
  await srv?.close();
  await agents?.close();
});

const post = async (path: string, body: unknown, key: string) => {
  const res = await fetch(`${srv.url}${path}`, json(key, body));
  return { status: res.status, body: (await res.json()) as any };
};
const judge = async (key: string) =>
  (await post("/api/evaluators", { name: "helpful", type: "llm_judge", provider: "openai", model: "gpt-4.1-mini", prompt: "Is {{output}} helpful?", output: { type: "numeric", min: 0, max: 1 } }, key)).body.evaluator.id as string;
const runs = (agent: string, ids: readonly string[]) => ids.flatMap((id) => [
  { event_type: "run_start", sdk_run_id: id, agent_name: agent, payload: { input: `question ${id}` } },
  { event_type: "run_end", sdk_run_id: id, payload: { output: `answer ${id}` } },
]);
const waiting = async (projectId: number) =>
  Number((await srv.ports.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM evaluation_jobs WHERE project_id = $1 AND status IN ('pending', 'retrying')", [projectId]))[0]!.n);

describe("judge jobs across tenants", () => {
  it(`a project may have ${MAX_RULES_PER_PROJECT} rules; the next is a 422 naming the cap`, async () => {
    const judgeId = await judge(busy.key);
    for (let i = 0; i < MAX_RULES_PER_PROJECT; i++) {
      const created = await post("/api/evaluation-rules", { evaluator_id: judgeId, name: `rule ${i}`, filter: { agent_name: "busy-bot" }, sampling: 1 }, busy.key);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
    const over = await post("/api/evaluation-rules", { evaluator_id: judgeId, name: "one too many", filter: { agent_name: "busy-bot" }, sampling: 1 }, busy.key);
    expect(over.status).toBe(422);
    expect(over.body.error.message).toContain(`at most ${MAX_RULES_PER_PROJECT} evaluation rules`);
    // Another project's rules are its own.
    expect((await post("/api/evaluation-rules", { evaluator_id: await judge(quiet.key), filter: { agent_name: "quiet-bot" }, sampling: 1 }, quiet.key)).status).toBe(201);
  });

  it("another project's run is judged within seconds while 1,500 jobs of the first wait", async () => {
    const sent = await post("/api/ingest/batch", { events: runs("busy-bot", Array.from({ length: 30 }, (_, i) => `busy-${i}`)) }, busy.key);
    expect(sent.body.rejected).toBe(0);
    // The pipeline queues a job per rule as each run ends: 50 × 30.
    await until("the busy project's jobs queued", () => srv.ports.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM evaluation_jobs WHERE project_id = $1", [busy.id]), (r) => Number(r[0]!.n) === 1_500);
    const before = await waiting(busy.id);
    expect(before).toBeGreaterThan(1_000);

    const started = performance.now();
    expect((await post("/api/ingest/batch", { events: runs("quiet-bot", ["quiet-1"]) }, quiet.key)).body.rejected).toBe(0);
    const scored = await until("the quiet project's score", () => fetch(`${srv.url}/api/runs/quiet-1/scores`, bearer(quiet.key)).then((r) => r.json() as Promise<any>), (b) => b.scores?.length === 1, 60_000);
    const latencyMs = performance.now() - started;
    const left = await waiting(busy.id);
    expect(scored.scores[0]).toMatchObject({ name: "helpful", source: "llm_judge" });
    // First in, first out, the quiet project's job came after all 1,500 (about 10 s of judge calls at 8 at a time).
    expect(latencyMs, `judged after ${Math.round(latencyMs)} ms with ${left} of the busy project's jobs waiting`).toBeLessThan(8_000);
    expect(left).toBeGreaterThan(500);
  }, 120_000);
});

/**
 * The LLM judge's own runs are evaluation, not production (docs/DASHBOARD.md, docs/EVALUATORS.md): an online judge
 * (agents-service against a fake OpenAI server on loopback) scores a project's three runs, one of its calls failing.
 * Its runs (agent runwatch-judge) stay out of the runs API, the dashboard's list, counts, panels and agent filter,
 * /errors and /agents; `agent_name=runwatch-judge` (`?q=agent:runwatch-judge` on the page) still lists them, a score still links to
 * its judge's run, and /costs shows their spend as evaluation spend, in none of the agents' figures.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../core/logger.js";
import { startEvaluationWorker, type EvaluationWorker } from "../../evaluation/jobs/worker.js";
import { SECRET, startHarness, type Harness } from "../../agents-service/test/harness.js";
import { bearer, json, loginJar, startTestServer, untilStalled, type CookieJar, type TestAccount, type TestServer } from "./harness.js";

let agents: Harness;
let srv: TestServer;
let worker: EvaluationWorker;
let alice: TestAccount;
let jar: CookieJar;

const get = async (path: string) => {
  const res = await fetch(`${srv.url}${path}`, bearer(alice.key));
  return { status: res.status, body: (await res.json()) as any };
};
const post = async (path: string, body: unknown) => {
  const res = await fetch(`${srv.url}${path}`, json(alice.key, body));
  return { status: res.status, body: (await res.json()) as any };
};
const page = async (path: string) => {
  const res = await jar.fetch(`${srv.url}${path}`);
  expect(res.status, path).toBe(200);
  return res.text();
};
type Run = { sdk_run_id: string; agent_name: string; status: string; cost_usd: number };
const listed = async (query = ""): Promise<Run[]> => (await get(`/api/runs?limit=100${query}`)).body.runs;

beforeAll(async () => {
  agents = await startHarness({ llmMaxRetries: 1, llmRetryBaseMs: 10 });
  srv = await startTestServer({
    pipeline: true,
    pipelineOptions: { maxWaitMs: 5 },
    env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000", RUNWATCH_AGENTS_URL: agents.url, AGENT_SECRET: SECRET, RUNWATCH_OPERATOR_JUDGE_KEY: "all" },
  });
  alice = await srv.account();
  worker = await startEvaluationWorker(srv.ports, srv.ports.config, createLogger("error"), {
    settings: { concurrency: 4, pollMs: 50, leaseSeconds: 30, backoffMs: 100, maxBackoffMs: 300 },
    projects: () => [alice.id],
  });
  jar = await loginJar(srv.url, alice.email);

  const judge = await post("/api/evaluators", { name: "helpful", type: "llm_judge", provider: "openai", model: "gpt-4.1-mini", prompt: "Is {{output}} helpful?", output: { type: "boolean" } });
  expect(judge.status).toBe(201);
  expect((await post("/api/evaluation-rules", { evaluator_id: judge.body.evaluator.id, filter: { agent_name: "support-bot" }, sampling: 1 })).status).toBe(201);
  // One answer makes the judge answer outside its schema: that judge call is an error run.
  agents.fake.judge = (prompt) => (prompt.includes("score 7") ? { explanation: "ok", score: 7 } : { explanation: "fine", score: true });
  const events = [
    ["sb-1", "answer one"], ["sb-2", "reply with score 7"], ["sb-3", null],
  ].flatMap(([id, output]) => [
    { event_type: "run_start", sdk_run_id: id, agent_name: "support-bot", payload: { input: { question: id } } },
    output === null
      ? { event_type: "error", sdk_run_id: id, payload: { error_type: "Timeout", error_message: "the CRM did not answer" } }
      : { event_type: "run_end", sdk_run_id: id, payload: { output, prompt_tokens: 100, completion_tokens: 20, model: "gpt-4o-mini" } },
  ]);
  expect((await post("/api/ingest/batch", { events })).body.rejected).toBe(0);
  // The rule judges every ended run: three judge calls, one of them failed, each with its run.
  await untilStalled("judge runs", () => listed("&agent_name=runwatch-judge"), (runs) => runs.length === 3 && runs.every((r) => r.status !== "running"), 60_000);
}, 180_000);
afterAll(async () => {
  await worker?.close();
  await srv?.close();
  await agents?.close();
});

describe("the judge's own runs", () => {
  it("are out of the runs API unless their agent is asked for", async () => {
    const judged = await listed("&agent_name=runwatch-judge");
    expect(judged.map((r) => r.status).sort()).toEqual(["error", "success", "success"]);
    expect((await listed()).map((r) => r.sdk_run_id).sort()).toEqual(["sb-1", "sb-2", "sb-3"]);
    expect((await listed("&status=error")).map((r) => r.sdk_run_id)).toEqual(["sb-3"]);
  });

  it("are out of the dashboard's rows, counts, panels and agent filter, /errors and /agents", async () => {
    const dashboard = await page("/dashboard");
    expect([...dashboard.matchAll(/<tr data-run="([^"]+)"/g)].map((m) => m[1]).sort()).toEqual(["sb-1", "sb-2", "sb-3"]);
    expect(/All runs<\/span><span class="stat-value">(\d+)</.exec(dashboard)?.[1]).toBe("3");
    expect(/Failed<\/span><span class="stat-value">(\d+)</.exec(dashboard)?.[1]).toBe("1");
    expect(dashboard).not.toContain('<option value="runwatch-judge"');
    expect(dashboard).not.toContain(">runwatch-judge<");
    expect(dashboard).not.toContain("/dashboard/judge-");
    const errors = await page("/errors");
    expect([...errors.matchAll(/<tr data-run="([^"]+)"/g)].map((m) => m[1])).toEqual(["sb-3"]);
    expect(errors).toContain("1 in total");
    const agentsPage = await page("/agents");
    expect(agentsPage).toContain("support-bot");
    expect(agentsPage).not.toContain("runwatch-judge");
    // Asked for by name, they are listed.
    const judgeRuns = await page("/dashboard?q=agent%3Arunwatch-judge");
    expect([...judgeRuns.matchAll(/<tr data-run="([^"]+)"/g)]).toHaveLength(3);
    // The filter's older parameter leads to the same filter.
    const old = await jar.fetch(`${srv.url}/dashboard?agent=runwatch-judge`);
    expect(old.headers.get("location")).toMatch(/\/dashboard\?q=agent%3Arunwatch-judge$/);
  });

  it("stay one click from the score they gave", async () => {
    const score = (await get("/api/runs/sb-1/scores")).body.scores[0];
    expect(score).toMatchObject({ name: "helpful", value: true, source: "llm_judge" });
    const runPage = await page("/dashboard/sb-1");
    const link = new RegExp(`href="((?:/p/[a-z0-9-]+)?/dashboard/${score.judge_run})"[^>]*>judge trace</a>`).exec(runPage);
    expect(link, "the score's judge trace link").not.toBeNull();
    const trace = await jar.fetch(`${srv.url}${link![1]}`);
    expect(trace.status).toBe(200);
    expect(await trace.text()).toContain("runwatch-judge");
  });

  it("are evaluation spend on /costs, in none of the agents' figures", async () => {
    const production = (await listed()).reduce((sum, r) => sum + r.cost_usd, 0);
    const evaluation = (await listed("&agent_name=runwatch-judge")).reduce((sum, r) => sum + r.cost_usd, 0);
    expect(production).toBeGreaterThan(0);
    expect(evaluation).toBeGreaterThan(0);
    const costs = await page("/costs");
    const usd = (id: string) => Number(new RegExp(`id="${id}" data-usd="([^"]+)"`).exec(costs)?.[1]);
    expect(usd("total-cost")).toBeCloseTo(production, 9);
    expect(usd("evaluation-cost")).toBeCloseTo(evaluation, 9);
    expect(/id="total-runs">(\d+)</.exec(costs)?.[1]).toBe("3");
    const byAgent = costs.slice(costs.indexOf('id="cost-by-agent"'), costs.indexOf("</table>", costs.indexOf('id="cost-by-agent"')));
    expect(byAgent).toContain("support-bot");
    expect(byAgent).not.toContain("runwatch-judge");
    expect(/id="evaluation-runs">(\d+) judge calls?</.exec(costs)?.[1]).toBe("3");
  });
});

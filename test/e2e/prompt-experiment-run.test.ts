/**
 * "Run experiment" on a prompt, over real HTTP (docs/PROMPTS.md, Experiments over prompt versions): agents-service
 * in front of a fake that speaks OpenAI's real HTTP API on loopback answers both the prompt's completions and the
 * LLM judge. Two versions run over a dataset on the server; each experiment has a result per item (a missing
 * variable is that item's error), the runs' LLM spans name the prompt version, the judge's scores are the
 * evaluator's, and moving `production` to the worse version is refused by the gate. A spent budget stops the job
 * saying so; a job resumes after its process stops (handed back) or ends (its lease runs out); a viewer may not
 * start one, on the API or the page; another project's dataset is a 422.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../core/logger.js";
import { setMember } from "../../stores/accounts/projects.js";
import { claimPromptExperimentJobs } from "../../stores/prompt-experiment-jobs.js";
import { startEvaluationWorker, type EvaluationWorker } from "../../evaluation/index.js";
import { startPromptExperimentWorker, type PromptExperimentWorker } from "../../web/prompts/experiment-worker.js";
import { SECRET, startHarness, type Harness } from "../../agents-service/test/harness.js";
import { switchProject } from "../../stores/accounts/current-project.js";
import { bearer, csrfFrom, json, loginJar, startTestServer, until, type TestAccount, type TestServer } from "./harness.js";

let agents: Harness;
let srv: TestServer;
let judges: EvaluationWorker;
let runner: PromptExperimentWorker;
let owner: TestAccount;
let stranger: TestAccount;
let viewerKey: string;
let viewer: { id: number; email: string };

beforeAll(async () => {
  agents = await startHarness({ llmMaxRetries: 0, llmTimeoutMs: 2_000 });
  srv = await startTestServer({
    pipeline: true,
    pipelineOptions: { maxWaitMs: 5 },
    env: {
      RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000", RUNWATCH_AGENTS_URL: agents.url, AGENT_SECRET: SECRET,
      RUNWATCH_OPERATOR_JUDGE_KEY: "all", RUNWATCH_EVALUATION_CALLS_PER_MINUTE: "100000",
    },
  });
  [owner, stranger] = [await srv.account(), await srv.account()];
  // Only this file's projects: in the scale pass other test files share the queues.
  const projects = () => [owner, stranger].filter(Boolean).map((a) => a.id);
  judges = await startEvaluationWorker(srv.ports, srv.ports.config, createLogger("error"), {
    settings: { concurrency: 4, pollMs: 50, leaseSeconds: 30, backoffMs: 100, maxBackoffMs: 300 }, projects,
  });
  runner = await startPromptExperimentWorker(srv.ports, srv.ports.config, createLogger("error"), {
    settings: { jobs: 2, itemConcurrency: 3, pollMs: 50, leaseSeconds: 30 }, projects,
  });
  viewer = await srv.user();
  await setMember(srv.ports.sql, owner.id, viewer.email, "viewer", owner.id);
  viewerKey = await srv.key(viewer.id, { projectId: owner.id });

  // The fake answers well when the prompt asks it to, and the judge scores an answer by whether it is good.
  agents.fake.chat = (_provider, body) => (JSON.stringify(body.messages).includes("carefully") ? `good answer to ${body.messages.at(-1).content}` : "bad answer");
  agents.fake.judge = (prompt) => ({ explanation: "judged", score: prompt.includes("good answer") ? 1 : 0 });
}, 60_000);
afterAll(async () => {
  await runner?.close();
  await judges?.close();
  await srv?.close();
  await agents?.close();
});

async function send(method: string, path: string, body: unknown, key = owner.key) {
  const res = await fetch(`${srv.url}${path}`, { ...json(key, body), method });
  return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as any) };
}
const post = (path: string, body: unknown, key = owner.key) => send("POST", path, body, key);
const get = async (path: string, key = owner.key) => {
  const res = await fetch(`${srv.url}${path}`, bearer(key));
  return { status: res.status, body: (await res.json()) as any };
};

const ITEMS = [
  { id: "q1", input: { question: "Where is my parcel?" }, expected_output: "tracking" },
  { id: "q2", input: { question: "Can I return shoes?" }, expected_output: "yes" },
  { id: "q3", input: { question: "Do you ship abroad?" }, expected_output: "yes" },
  { id: "q4", input: { topic: "no question here" }, expected_output: "n/a" },
];

async function finished(id: string, key = owner.key) {
  return (await until(`experiment ${id} finished`, () => get(`/api/prompts/support/experiments/${id}`, key), (r) => !["queued", "running"].includes(r.body.job?.status), 60_000)).body.job;
}

describe("running a dataset through prompt versions on the server", () => {
  let evaluatorId: string;

  beforeAll(async () => {
    expect((await post("/api/prompts/support/versions", {
      prompt: [{ role: "system", content: "Answer carefully and kindly." }, { role: "user", content: "{{question}}" }],
      config: { provider: "openai", model: "gpt-4o-mini", parameters: { max_tokens: 100 } }, message: "careful",
    })).status).toBe(201);
    expect((await post("/api/prompts/support/versions", {
      prompt: "Answer: {{question}}", config: { provider: "openai", model: "gpt-4o-mini", parameters: { max_tokens: 100 } }, message: "terse",
    })).status).toBe(201);
    expect((await post("/api/datasets", { name: "support questions" })).status).toBe(201);
    expect((await post("/api/datasets/support%20questions/items", { items: ITEMS })).status).toBe(201);
    const e = await post("/api/evaluators", { name: "correctness", type: "llm_judge", provider: "openai", model: "gpt-4.1-mini", prompt: "Is {{output}} a correct answer to {{input}}?", output: { type: "numeric", min: 0, max: 1 } });
    expect(e.status, JSON.stringify(e.body)).toBe(201);
    evaluatorId = e.body.evaluator.id;
    expect((await send("PUT", "/api/prompts/support/gate/rules/correctness", { max_drop: 0.05 })).status).toBe(200);
  });

  it("runs two versions: a result per item, the prompt version on each LLM span, the judge's scores, and the gate refusing the worse", async () => {
    const one = await post("/api/prompts/support/experiments", { dataset: "support questions", version: 1, name: "careful", evaluators: ["correctness"] });
    expect(one.status, JSON.stringify(one.body)).toBe(202);
    expect(one.body.experiment).toMatchObject({ name: "careful", prompt_name: "support", prompt_version: 1 });
    expect(one.body.job).toMatchObject({ status: "queued", total: 4, done: 0 });
    const two = await post("/api/prompts/support/experiments", { dataset: "support questions", name: "terse", evaluators: [evaluatorId] });
    expect(two.status, JSON.stringify(two.body)).toBe(202);
    expect(two.body.experiment.prompt_version).toBe(2);

    for (const started of [one, two]) {
      const job = await finished(started.body.experiment.id);
      expect(job).toMatchObject({ status: "completed", total: 4, done: 4, failed: 1, message: "" });
      expect(job.url).toBe(`/datasets/support%20questions/compare?experiments=${started.body.experiment.id}`);
    }
    // Every item has its result (the missing variable's run is an error, which the judge scores too).
    const read = async (id: string) => (await until(`experiment ${id} scored`, () => get(`/api/experiments/${id}`),
      (r) => r.body.items?.length === 4 && r.body.items.every((i: any) => i.scores.correctness !== undefined), 60_000)).body;
    const careful = await read(one.body.experiment.id);
    const terse = await read(two.body.experiment.id);
    expect(careful.experiment.status).toBe("completed");
    const q4 = careful.items.find((i: any) => i.item_id === "q4");
    expect(q4.status).toBe("error");
    expect(q4.error).toContain("question");
    expect(careful.items.find((i: any) => i.item_id === "q1")).toMatchObject({ status: "success", output: "good answer to Where is my parcel?", scores: { correctness: 1 } });
    expect(careful.experiment.scores.correctness).toMatchObject({ mean: 0.75, count: 4 });
    expect(terse.experiment.scores.correctness).toMatchObject({ mean: 0, count: 4 });
    expect(careful.experiment.cost_usd).toBeGreaterThan(0);

    // The run is an ordinary traced run: its LLM span names the prompt version it ran.
    const run = await get(`/api/runs/${careful.items.find((i: any) => i.item_id === "q2").sdk_run_id}`);
    expect(run.status).toBe(200);
    const llm = (run.body.events as any[]).find((e) => e.event_type === "step" && e.payload.kind === "llm");
    expect(llm.payload).toMatchObject({ prompt_name: "support", prompt_version: 1, model: "gpt-4o-mini" });
    const scores = await get(`/api/runs/${careful.items.find((i: any) => i.item_id === "q2").sdk_run_id}/scores`);
    expect(scores.body.scores.find((s: any) => s.name === "correctness")).toMatchObject({ given_by: "evaluator", source: "llm_judge" });

    // The gate counts both (made by a member, scored by an evaluator): production on v1, moving it to v2 is refused.
    expect((await send("PUT", "/api/prompts/support/labels/production", { version: 1 })).status).toBe(200);
    const refused = await send("PUT", "/api/prompts/support/labels/production", { version: 2 });
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect(refused.body.error.code).toBe("gate_refused");
    expect(refused.body.error.message).toContain('"terse"');
  });

  it("answers bad input with a 422 naming the field, a viewer with 403, another project's dataset as none", async () => {
    const field = async (body: unknown, name = "support") => {
      const r = await post(`/api/prompts/${name}/experiments`, body);
      return [r.status, r.body.error?.field];
    };
    expect(await field({ version: 1 })).toEqual([422, "dataset"]);
    expect(await field({ dataset: "support questions", version: 9 })).toEqual([422, "version"]);
    expect(await field({ dataset: "support questions", label: "nope" })).toEqual([422, "label"]);
    expect(await field({ dataset: "support questions", version: "1" })).toEqual([422, "version"]);
    expect(await field({ dataset: "support questions", version: 1, evaluators: ["no such judge"] })).toEqual([422, "evaluators.0"]);
    expect(await field({ dataset: "support questions", version: 1, evaluators: "correctness" })).toEqual([422, "evaluators"]);
    expect(await field({ dataset: "support questions", version: 1, colour: "red" })).toEqual([422, "colour"]);
    expect(await field({ dataset: "support questions", version: 1, repetitions: 0 })).toEqual([422, "repetitions"]);
    expect((await post("/api/prompts/support/experiments", { dataset: "support questions", version: 1, name: "careful" })).status).toBe(409);
    expect((await post("/api/prompts/nope/experiments", { dataset: "support questions", version: 1 })).status).toBe(404);

    expect((await post("/api/prompts/support/experiments", { dataset: "support questions", version: 1 }, viewerKey)).status).toBe(403);
    // The page: a viewer sees the experiments but no button, and may not post the form.
    const [project] = await srv.ports.sql.query<{ slug: string }>("SELECT slug FROM projects WHERE id = $1", [owner.id]);
    await switchProject(srv.ports.sql, viewer.id, project!.slug);
    const jar = await loginJar(srv.url, viewer.email);
    const page = await jar.fetch(`${srv.url}/p/${project!.slug}/prompts/support`);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('id="experiments"');
    expect(html).not.toContain("run-experiment");
    expect((await jar.form(`${srv.url}/p/${project!.slug}/prompts/support/experiments`, { _csrf: csrfFrom(html), dataset: "support questions", version: "1" })).status).toBe(403);
    // The stranger has a prompt of that name but not the dataset: it is not theirs to run.
    expect((await post("/api/prompts/support/versions", { prompt: "{{question}}" }, stranger.key)).status).toBe(201);
    const theirs = await post("/api/prompts/support/experiments", { dataset: "support questions", version: 1 }, stranger.key);
    expect([theirs.status, theirs.body.error.field]).toEqual([422, "dataset"]);
    const progress = await get(`/api/prompts/support/experiments/${(await get("/api/experiments?dataset=support%20questions")).body.experiments[0].id}`, stranger.key);
    expect(progress.status).toBe(404);
  });

  it("resumes a job whose process ended or stopped, and stops at a spent budget saying so", async () => {
    // A job claimed by a process that then ended: its lease runs out, and a worker finishes it.
    await runner.close();
    const lost = await post("/api/prompts/support/experiments", { dataset: "support questions", version: 1, name: "resumed" });
    expect(lost.status).toBe(202);
    const claimed = await claimPromptExperimentJobs(srv.ports.sql, 5, 1, [owner.id]);
    expect(claimed.map((j) => [j.experiment_id, j.status, j.attempts])).toEqual([[lost.body.experiment.id, "running", 1]]);
    runner = await startPromptExperimentWorker(srv.ports, srv.ports.config, createLogger("error"), {
      settings: { jobs: 2, itemConcurrency: 3, pollMs: 50, leaseSeconds: 30 }, projects: () => [owner.id, stranger.id],
    });
    const resumed = await finished(lost.body.experiment.id);
    expect(resumed).toMatchObject({ status: "completed", done: 4, failed: 1 });
    const [row] = await srv.ports.sql.query<{ attempts: number }>("SELECT attempts FROM prompt_experiment_jobs WHERE experiment_id = $1", [lost.body.experiment.id]);
    expect(Number(row!.attempts)).toBe(2);

    // A process that stops on purpose finishes the items under way and hands the job back; the next one resumes it.
    await runner.close();
    runner = await startPromptExperimentWorker(srv.ports, srv.ports.config, createLogger("error"), {
      settings: { jobs: 1, itemConcurrency: 1, pollMs: 50, leaseSeconds: 30 }, projects: () => [owner.id, stranger.id],
    });
    agents.fake.script("openai", { kind: "delay", ms: 400 }, { kind: "delay", ms: 400 });
    const handed = await post("/api/prompts/support/experiments", { dataset: "support questions", version: 1, name: "handed back" });
    const jobRow = async () => (await srv.ports.sql.query<{ status: string; done: number; attempts: number; locked_until: unknown }>(
      "SELECT status, done, attempts, locked_until FROM prompt_experiment_jobs WHERE experiment_id = $1", [handed.body.experiment.id]))[0]!;
    await until("the job under way", jobRow, (r) => r.status === "running", 10_000);
    await runner.close();
    const left = await jobRow();
    expect([left.status, Number(left.attempts), left.locked_until]).toEqual(["running", 0, null]);
    expect(Number(left.done)).toBeLessThan(4);
    runner = await startPromptExperimentWorker(srv.ports, srv.ports.config, createLogger("error"), {
      settings: { jobs: 2, itemConcurrency: 3, pollMs: 50, leaseSeconds: 30 }, projects: () => [owner.id, stranger.id],
    });
    expect(await finished(handed.body.experiment.id)).toMatchObject({ status: "completed", done: 4, failed: 1 });
    // The job counts an item once its run is sent; the run is read once the pipeline has stored it.
    await until("the handed-back job's results", () => get(`/api/experiments/${handed.body.experiment.id}`), (r) => r.body.items?.length === 4);

    // A provider that refuses one item and does not answer another in time fails those items; the job goes on.
    agents.fake.script("openai", { kind: "status", status: 404 }, { kind: "delay", ms: 2_500 });
    const flaky = await post("/api/prompts/support/experiments", { dataset: "support questions", version: 1, name: "flaky provider" });
    expect(await finished(flaky.body.experiment.id)).toMatchObject({ status: "completed", done: 4, failed: 3 });
    const flakyItems = (await until("flaky results", () => get(`/api/experiments/${flaky.body.experiment.id}`), (r) => r.body.items?.length === 4)).body.items;
    expect(flakyItems.filter((i: any) => i.status === "success")).toHaveLength(1);
    const errors = flakyItems.map((i: any) => i.error ?? "").join(" | ");
    expect(errors).toContain("OpenAI answered HTTP 404");
    expect(errors).toMatch(/did not answer|timed? ?out/i);

    expect((await send("PUT", "/api/evaluation-settings", { daily_budget_usd: 0.000001 })).status).toBe(200);
    const capped = await post("/api/prompts/support/experiments", { dataset: "support questions", version: 1, name: "over budget" });
    expect(capped.status).toBe(202);
    const job = await finished(capped.body.experiment.id);
    expect(job.status).toBe("stopped");
    expect(job.message).toContain("budget");
    expect(job.done).toBeLessThan(4);
    expect((await send("PUT", "/api/evaluation-settings", { daily_budget_usd: null })).status).toBe(200);
  });
});

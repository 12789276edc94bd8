/**
 * Rules that fill annotation queues without judging, and rules on spans, over real HTTP with the pipeline
 * (docs/EVALUATORS.md, Filling queues automatically): runs that end with an error routed to a queue once each,
 * however often their events are sent; thumbs down given through the API, a batch and an event's own scores
 * routed, thumbs up not; a low rating routed by a score rule; a backfill of a routing rule over past runs; a span
 * rule judging each matching span once, online and by backfill; the refusals, each naming its field; and another
 * project's queue out of reach.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nameUuid } from "../../core/ids.js";
import { createLogger } from "../../core/logger.js";
import { startEvaluationWorker, type EvaluationWorker } from "../../evaluation/jobs/worker.js";
import { createProject } from "../../stores/accounts/projects.js";
import { bearer, json, startTestServer, type TestServer, until } from "./harness.js";

let srv: TestServer;
let worker: EvaluationWorker;
let key: string;
let outsider: string;

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000" } });
  const owner = await srv.user();
  const project = await createProject(srv.ports.sql, owner.id, "Routing team");
  key = await srv.key(owner.id, { projectId: project.id });
  outsider = (await srv.account()).key;
  // The scale pass shares Postgres between test files: only this project's jobs are this worker's.
  worker = await startEvaluationWorker(srv.ports, srv.ports.config, createLogger("error"), {
    settings: { concurrency: 4, pollMs: 50, leaseSeconds: 30, backoffMs: 100, maxBackoffMs: 300 }, projects: () => [project.id],
  });
}, 60_000);
afterAll(async () => {
  await worker?.close();
  await srv?.close();
});

const send = async (method: string, path: string, body: unknown, as = key) => {
  const res = await fetch(`${srv.url}${path}`, { ...json(as, body), method });
  return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as any) };
};
const post = (path: string, body: unknown, as = key) => send("POST", path, body, as);
const get = async (path: string, as = key) => {
  const res = await fetch(`${srv.url}${path}`, bearer(as));
  return { status: res.status, body: (await res.json()) as any };
};
const ingest = async (events: unknown[]) => {
  const res = await post("/api/ingest/batch", { events });
  expect(res.body.rejected, JSON.stringify(res.body).slice(0, 300)).toBe(0);
};
const ended = (id: string) => until(`${id} ended`, () => get(`/api/runs/${id}`), (r) => ["success", "error"].includes(r.body?.run?.status));
const queueRuns = async (queueId: string) => ((await get(`/api/annotation-queues/${queueId}?status=pending`)).body.items as { sdk_run_id: string; source: string }[]).map((i) => i.sdk_run_id).sort();
const newQueue = async (name: string) => (await post("/api/annotation-queues", { name, score_configs: [{ name: "correct", type: "boolean" }] })).body.queue.id as string;

/** A run of `agent`: ends with an error when `fails`, else with an answer; `extra` events go between. */
const run = (id: string, agent: string, opts: { fails?: boolean; at?: string; extra?: Record<string, unknown>[]; endPayload?: Record<string, unknown> } = {}) => [
  { event_id: nameUuid(`${id}-start`), event_type: "run_start", sdk_run_id: id, agent_name: agent, ...(opts.at ? { occurred_at: opts.at } : {}), payload: { input: `question ${id}` } },
  ...(opts.extra ?? []),
  opts.fails
    ? { event_id: nameUuid(`${id}-end`), event_type: "error", sdk_run_id: id, ...(opts.at ? { occurred_at: opts.at } : {}), payload: { error_type: "ToolError", error_message: "the search backend timed out" } }
    : { event_id: nameUuid(`${id}-end`), event_type: "run_end", sdk_run_id: id, ...(opts.at ? { occurred_at: opts.at } : {}), payload: { output: `answer ${id}`, ...opts.endPayload } },
];

describe("rules that fill queues", () => {
  it("refuses a rule with nothing to do, or a condition it cannot apply, naming the field", async () => {
    const queueId = await newQueue("refusals");
    expect((await post("/api/evaluation-rules", { sampling: 1 })).body.error.field).toBe("evaluator_id");
    expect((await post("/api/evaluation-rules", { sampling: 1, queue_action: { queue_id: queueId, below: 0.5 } })).body.error.field).toBe("queue_action.score_name");
    expect((await post("/api/evaluation-rules", { sampling: 1, queue_action: { queue_id: queueId, score_name: "user_feedback" } })).body.error.field).toBe("queue_action");
    expect((await post("/api/evaluation-rules", { sampling: 1, queue_action: { queue_id: queueId, score_name: "x".repeat(101), equals: false } })).body.error.field).toBe("queue_action.score_name");
    expect((await post("/api/evaluation-rules", { sampling: 1, filter: { metadata: { tier: "gold" } }, queue_action: { queue_id: queueId } })).body.error.field).toBe("filter.metadata");
    expect((await post("/api/evaluation-rules", { sampling: 1, delay_s: 30, queue_action: { queue_id: queueId } })).body.error.field).toBe("delay_s");
    expect((await post("/api/evaluation-rules", { target: "span", sampling: 1, queue_action: { queue_id: queueId, score_name: "user_feedback", equals: false } })).body.error.field).toBe("target");
    const check = (await post("/api/evaluators", { name: "has answer", type: "builtin", check: { kind: "contains", value: "answer" } })).body.evaluator.id;
    expect((await post("/api/evaluation-rules", { evaluator_id: check, sampling: 1, queue_action: { queue_id: queueId, score_name: "x", equals: false } })).body.error.field).toBe("queue_action.score_name");
    // Another project's queue is not one of this project's.
    expect((await post("/api/evaluation-rules", { sampling: 1, queue_action: { queue_id: queueId } }, outsider)).body.error.field).toBe("queue_action.queue_id");
  });

  it("adds each run that ends with an error to the queue once, however often its events arrive", async () => {
    const queueId = await newQueue("errors");
    const rule = await post("/api/evaluation-rules", { filter: { agent_name: "router-bot", has_error: true }, sampling: 1, queue_action: { queue_id: queueId } });
    expect(rule.status).toBe(201);
    expect(rule.body.rule).toMatchObject({ evaluator_id: null, queue_action: { queue_id: queueId } });
    const events = [
      ...["ok-1", "ok-2", "ok-3"].flatMap((id) => run(id, "router-bot")),
      ...["bad-1", "bad-2"].flatMap((id) => run(id, "router-bot", { fails: true })),
      ...run("other-bad", "other-bot", { fails: true }),
    ];
    await ingest(events);
    for (const id of ["ok-3", "bad-2", "other-bad"]) await ended(id);
    await until("errors routed", () => queueRuns(queueId), (ids) => ids.length >= 2);
    await ingest(events); // a client's retry: the same events again
    await new Promise((r) => setTimeout(r, 500));
    expect(await queueRuns(queueId)).toEqual(["bad-1", "bad-2"]);
    expect((await get(`/api/evaluation-rules?queue_id=${queueId}`)).body.rules.map((r: { id: string }) => r.id)).toEqual([rule.body.rule.id]);
    expect((await get("/api/evaluation-rules?queue_id=nope")).body.error.field).toBe("queue_id");
    const items = (await get(`/api/annotation-queues/${queueId}`)).body.items;
    expect(items.every((i: { source: string }) => i.source === "rule")).toBe(true);
  });

  it("adds the runs given thumbs down — through the API, a batch or an event — and not those given thumbs up", async () => {
    const queueId = await newQueue("thumbs down");
    expect((await post("/api/evaluation-rules", { sampling: 1, filter: { agent_name: "feedback-bot" }, queue_action: { queue_id: queueId, score_name: "user_feedback", equals: false } })).status).toBe(201);
    await ingest([
      ...["fb-1", "fb-2", "fb-3", "fb-4"].flatMap((id) => run(id, "feedback-bot")),
      ...run("fb-other", "other-bot"),
    ]);
    for (const id of ["fb-4", "fb-other"]) await ended(id);
    expect((await post("/api/scores", { sdk_run_id: "fb-1", name: "user_feedback", value: false, comment: "wrong refund amount" })).status).toBe(201);
    expect((await post("/api/scores", { sdk_run_id: "fb-2", name: "user_feedback", value: true })).status).toBe(201);
    expect((await post("/api/scores", { sdk_run_id: "fb-other", name: "user_feedback", value: false })).status).toBe(201);
    const batch = await post("/api/scores/batch", { scores: [{ sdk_run_id: "fb-3", name: "user_feedback", value: false }, { sdk_run_id: "fb-3", name: "other", value: false }] });
    expect(batch.status).toBe(207);
    expect(await queueRuns(queueId)).toEqual(["fb-1", "fb-3"]);
    // A score sent inside an event (an SDK's or an OpenTelemetry span's) is routed by the pipeline.
    await ingest([{ event_type: "step", sdk_run_id: "fb-4", span_id: "feedback", payload: { node_name: "feedback", phase: "end", scores: [{ name: "user_feedback", value: false }] } }]);
    await until("the event's thumbs down routed", () => queueRuns(queueId), (ids) => ids.includes("fb-4"));
    expect(await queueRuns(queueId)).toEqual(["fb-1", "fb-3", "fb-4"]);
  });

  it("adds the runs given a low rating, by a score rule with a threshold", async () => {
    const queueId = await newQueue("low ratings");
    await post("/api/evaluation-rules", { sampling: 1, queue_action: { queue_id: queueId, score_name: "helpfulness", below: 0.5 } });
    await ingest(["hr-1", "hr-2"].flatMap((id) => run(id, "rating-bot")));
    await ended("hr-2");
    await post("/api/scores", { sdk_run_id: "hr-1", name: "helpfulness", value: 0.2 });
    await post("/api/scores", { sdk_run_id: "hr-2", name: "helpfulness", value: 0.9 });
    expect(await queueRuns(queueId)).toEqual(["hr-1"]);
  });

  it("backfills a routing rule: the past error runs of a range join the queue, at no model cost", async () => {
    const past = "2026-10-03T10:00:00.000Z";
    await ingest([
      ...Array.from({ length: 30 }, (_, i) => run(`old-${i}`, "history-router", { fails: i % 3 === 0, at: past })).flat(),
    ]);
    await ended("old-29");
    const queueId = await newQueue("past errors");
    const rule = (await post("/api/evaluation-rules", { filter: { agent_name: "history-router", has_error: true }, sampling: 1, queue_action: { queue_id: queueId } })).body.rule;
    const range = { from: "2026-10-03T00:00:00Z", to: "2026-10-04T00:00:00Z" };
    const estimate = await post(`/api/evaluation-rules/${rule.id}/backfill`, range);
    expect(estimate.body.estimate).toMatchObject({ matching_runs: 10, sampled_runs: 10, estimated_cost_usd: 0 });
    expect(await queueRuns(queueId)).toEqual([]);
    const started = await post(`/api/evaluation-rules/${rule.id}/backfill`, { ...range, confirm: true });
    expect(started.status).toBe(202);
    expect(started.body.queued).toBe(10);
    expect((await queueRuns(queueId)).length).toBe(10);
    // A rule on scores given has nothing to backfill; another project cannot backfill this rule.
    const scoreRule = (await post("/api/evaluation-rules", { sampling: 1, queue_action: { queue_id: queueId, score_name: "user_feedback", equals: false } })).body.rule;
    expect((await post(`/api/evaluation-rules/${scoreRule.id}/backfill`, range)).body.error.field).toBe("queue_action.score_name");
    expect((await post(`/api/evaluation-rules/${rule.id}/backfill`, range, outsider)).status).toBe(404);
  });
});

describe("rules on spans", () => {
  const retrieve = (id: string, output: unknown) => [
    { event_id: nameUuid(`${id}-r-start`), event_type: "step", sdk_run_id: id, span_id: `${id}-retrieve`, payload: { node_name: "retrieve", phase: "start" } },
    { event_id: nameUuid(`${id}-r-end`), event_type: "step", sdk_run_id: id, span_id: `${id}-retrieve`, payload: { node_name: "retrieve", phase: "end", output } },
    { event_id: nameUuid(`${id}-a-end`), event_type: "step", sdk_run_id: id, span_id: `${id}-answer`, payload: { node_name: "answer", phase: "end", output: "no docs here" } },
  ];
  const spanScores = async (id: string) => ((await get(`/api/runs/${id}/scores`)).body.scores ?? []) as { span_id: string | null; value: unknown }[];

  it("judges each matching span once as it ends, and past spans by backfill", async () => {
    const check = (await post("/api/evaluators", { name: "found docs", type: "builtin", check: { kind: "contains", value: "doc-" } })).body.evaluator.id;
    const rule = (await post("/api/evaluation-rules", { evaluator_id: check, target: "span", filter: { agent_name: "rag-bot", span_name: "retrieve" }, sampling: 1 })).body.rule;
    await ingest([...run("rag-1", "rag-bot", { extra: retrieve("rag-1", ["doc-1"]) }), ...run("rag-2", "rag-bot", { extra: retrieve("rag-2", []) })]);
    // Each span is its own job, judged in no particular order: wait for both.
    await until("spans judged", () => Promise.all([spanScores("rag-1"), spanScores("rag-2")]), (all) => all.every((s) => s.length === 1));
    expect(await spanScores("rag-1")).toMatchObject([{ span_id: "rag-1-retrieve", value: true }]);
    expect(await spanScores("rag-2")).toMatchObject([{ span_id: "rag-2-retrieve", value: false }]);

    const past = "2026-10-05T10:00:00.000Z";
    const old = Array.from({ length: 20 }, (_, i) => `rag-old-${i}`);
    await ingest(old.flatMap((id) => run(id, "rag-history", { at: past, extra: retrieve(id, ["doc-9"]).map((e) => ({ ...e, occurred_at: past })) })));
    await ended("rag-old-19");
    const history = (await post("/api/evaluation-rules", { evaluator_id: check, target: "span", filter: { agent_name: "rag-history", span_name: "retrieve" }, sampling: 1 })).body.rule;
    const range = { from: "2026-10-05T00:00:00Z", to: "2026-10-06T00:00:00Z" };
    expect((await post(`/api/evaluation-rules/${history.id}/backfill`, range)).body.estimate).toMatchObject({ matching_runs: 20, sampled_runs: 20 });
    expect((await post(`/api/evaluation-rules/${history.id}/backfill`, { ...range, confirm: true })).body.queued).toBe(20);
    await until("past spans judged", () => Promise.all(old.map(spanScores)), (all) => all.every((s) => s.length === 1));
    expect(await spanScores("rag-old-3")).toMatchObject([{ span_id: "rag-old-3-retrieve", value: true }]);
    // The same range again queues nothing new: each span is judged once.
    expect((await post(`/api/evaluation-rules/${history.id}/backfill`, { ...range, confirm: true })).body.queued).toBe(0);
    expect(rule.target).toBe("span");
  });
});

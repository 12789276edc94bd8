/**
 * Annotation queues over real HTTP (docs/EVALUATION.md, Annotation queues): a team project's queue worked by two
 * reviewers at once, neither ever handed the item the other holds; a lock that outlives its 30 minutes goes to the
 * next reviewer; scores checked against the queue's configs and stored as the reviewer's (source human); a review's
 * corrected expected output added to a dataset; a queue with members refusing others; an online rule with a built-in
 * check that adds the runs it fails to the queue; and another project's queue, items and runs out of reach.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../core/logger.js";
import { projectChannel } from "../../core/ports/pubsub.js";
import { auditLog, createProject, setMember } from "../../stores/accounts/projects.js";
import { startEvaluationWorker, type EvaluationWorker } from "../../evaluation/jobs/worker.js";
import { bearer, json, startTestServer, until, waitForRun, type TestServer } from "./harness.js";

let srv: TestServer;
let worker: EvaluationWorker;
let keys: { owner: string; bob: string; carol: string; dave: string; outsider: string };
let teamId: number;
let emails: { bob: string; carol: string };

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000" } });
  const owner = await srv.user();
  const team = await createProject(srv.ports.sql, owner.id, "Support team");
  teamId = team.id;
  // The scale pass shares Postgres between test files: only this project's jobs are this worker's.
  worker = await startEvaluationWorker(srv.ports, srv.ports.config, createLogger("error"), {
    settings: { concurrency: 4, pollMs: 50, leaseSeconds: 30, backoffMs: 100, maxBackoffMs: 300 }, projects: () => [team.id],
  });
  const [bob, carol, dave] = [await srv.user(), await srv.user(), await srv.user()];
  for (const u of [bob, carol]) await setMember(srv.ports.sql, team.id, u.email, "member", owner.id);
  await setMember(srv.ports.sql, team.id, dave.email, "viewer", owner.id);
  emails = { bob: bob.email, carol: carol.email };
  keys = {
    owner: await srv.key(owner.id, { projectId: team.id }), bob: await srv.key(bob.id, { projectId: team.id }),
    carol: await srv.key(carol.id, { projectId: team.id }), dave: await srv.key(dave.id, { projectId: team.id }), outsider: (await srv.account()).key,
  };
  const events = Array.from({ length: 40 }, (_, i) => [
    { event_type: "run_start", sdk_run_id: `q-${i}`, agent_name: "support-bot", payload: { input: { question: `question ${i}` } } },
    { event_type: "run_end", sdk_run_id: `q-${i}`, payload: { output: i % 4 === 0 ? "Sorry, I cannot help." : `answer ${i}` } },
  ]).flat();
  expect((await fetch(`${srv.url}/api/ingest/batch`, json(keys.owner, { events }))).status).toBe(207);
  for (let i = 0; i < 100; i++) {
    const r = await fetch(`${srv.url}/api/runs/q-39`, bearer(keys.owner));
    if (r.status === 200 && ((await r.json()) as { run: { status: string } }).run.status === "success") break;
    await new Promise((res) => setTimeout(res, 100));
  }
}, 60_000);
afterAll(async () => {
  await worker?.close();
  await srv?.close();
});

const call = async (method: string, path: string, body: unknown, key: string) => {
  const res = await fetch(`${srv.url}${path}`, { ...json(key, body), method });
  return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as any) };
};
const post = (path: string, body: unknown, key = keys.owner) => call("POST", path, body, key);
const get = async (path: string, key = keys.owner) => {
  const res = await fetch(`${srv.url}${path}`, bearer(key));
  return { status: res.status, body: (await res.json()) as any };
};
const CONFIGS = [
  { name: "correct", type: "boolean", description: "Is the answer right?" },
  { name: "quality", type: "numeric", min: 1, max: 5 },
  { name: "tone", type: "categorical", categories: ["ok", "rude"] },
];

describe("annotation queues", () => {
  let queueId: string;

  it("refuses a bad queue naming the field, and keeps it to its project", async () => {
    expect((await post("/api/annotation-queues", { name: "x", score_configs: [] })).body.error.field).toBe("score_configs");
    expect((await post("/api/annotation-queues", { name: "x", score_configs: [{ name: "q", type: "numeric", min: 5, max: 1 }] })).body.error.field).toBe("score_configs[0].max");
    expect((await post("/api/annotation-queues", { name: "x", score_configs: [{ name: "c", type: "boolean" }], members: ["nobody@example.com"] })).body.error.field).toBe("members[0]");
    const created = await post("/api/annotation-queues", { name: "support review", score_configs: CONFIGS });
    expect(created.status).toBe(201);
    queueId = created.body.queue.id;
    expect((await post("/api/annotation-queues", { name: "support review", score_configs: CONFIGS })).status).toBe(409);
    expect((await get(`/api/annotation-queues/${queueId}`, keys.outsider)).status).toBe(404);
    expect((await post(`/api/annotation-queues/${queueId}/items`, { items: [{ sdk_run_id: "q-1" }] }, keys.outsider)).status).toBe(404);
  });

  it("hands two reviewers working at once different items, never the same one", async () => {
    const added = await post(`/api/annotation-queues/${queueId}/items`, { items: Array.from({ length: 20 }, (_, i) => ({ sdk_run_id: `q-${i}` })) });
    expect(added).toMatchObject({ status: 201, body: { added: 20 } });
    expect((await post(`/api/annotation-queues/${queueId}/items`, { items: [{ sdk_run_id: "q-1" }] })).body.added).toBe(0);
    expect((await post(`/api/annotation-queues/${queueId}/items`, { items: [{ sdk_run_id: "nope" }] })).status).toBe(404);

    const seen = new Map<string, string>();
    for (let round = 0; round < 10; round++) {
      // Both ask at the same moment.
      const [b, c] = await Promise.all([post(`/api/annotation-queues/${queueId}/next`, {}, keys.bob), post(`/api/annotation-queues/${queueId}/next`, {}, keys.carol)]);
      expect([b.status, c.status]).toEqual([200, 200]);
      expect(b.body.item.id).not.toBe(c.body.item.id);
      // Asking again before finishing hands back the same item.
      expect((await post(`/api/annotation-queues/${queueId}/next`, {}, keys.bob)).body.item.id).toBe(b.body.item.id);
      // The other's item is not yours to complete.
      expect((await post(`/api/annotation-queues/${queueId}/items/${c.body.item.id}/complete`, { scores: [] }, keys.bob)).body.error.code).toBe("item_locked");
      for (const [who, r] of [["bob", b], ["carol", c]] as const) {
        expect(seen.has(r.body.item.id)).toBe(false);
        seen.set(r.body.item.id, who);
        const done = await post(`/api/annotation-queues/${queueId}/items/${r.body.item.id}/complete`,
          { scores: [{ name: "correct", value: round % 2 === 0 }, { name: "quality", value: 3 }, { name: "tone", value: "ok", comment: "polite" }], comment: `by ${who}` }, keys[who]);
        expect(done.status).toBe(200);
        expect(done.body.score_ids).toHaveLength(3);
      }
    }
    expect(seen.size).toBe(20);
    expect((await post(`/api/annotation-queues/${queueId}/next`, {}, keys.bob)).status).toBe(204);
    const q = await get(`/api/annotation-queues/${queueId}`);
    expect(q.body.progress).toMatchObject({ pending: 0, completed: 20, skipped: 0 });
    expect(q.body.progress.reviewers.map((r: { email: string; completed: number }) => [r.email, r.completed]).sort()).toEqual([[emails.bob, 10], [emails.carol, 10]].sort());
    // The list reads every queue's progress at once, each its own.
    const listed = (await get("/api/annotation-queues")).body.queues as { id: string; progress: { completed: number; reviewers: unknown[] } }[];
    expect(listed.find((l) => l.id === queueId)!.progress).toEqual(q.body.progress);
    expect(listed.filter((l) => l.id !== queueId).every((l) => l.progress.completed === 0 && l.progress.reviewers.length === 0)).toBe(true);
    const scores = (await get("/api/runs/q-0/scores")).body.scores;
    expect(scores.map((s: { name: string; source: string }) => `${s.name}:${s.source}`).sort()).toEqual(["correct:human", "quality:human", "tone:human"]);
  });

  it("checks scores against the configs, skips, and adds a corrected expected output to a dataset", async () => {
    await post(`/api/annotation-queues/${queueId}/items`, { items: [{ sdk_run_id: "q-30" }, { sdk_run_id: "q-31" }] });
    const item = (await post(`/api/annotation-queues/${queueId}/next`, {}, keys.bob)).body.item;
    for (const [scores, field] of [[[{ name: "quality", value: 9 }], "scores[0].value"], [[{ name: "nope", value: 1 }], "scores[0].name"], [[{ name: "tone", value: "angry" }], "scores[0].value"]] as const) {
      expect((await post(`/api/annotation-queues/${queueId}/items/${item.id}/complete`, { scores }, keys.bob)).body.error.field).toBe(field);
    }
    await post("/api/datasets", { name: "reviewed" });
    const done = await post(`/api/annotation-queues/${queueId}/items/${item.id}/complete`,
      { scores: [{ name: "correct", value: false }], add_to_dataset: { dataset: "reviewed", expected_output: "The corrected answer." } }, keys.bob);
    expect(done.body.dataset_item).toMatchObject({ dataset: "reviewed", version: 1 });
    const items = (await get("/api/datasets/reviewed/items")).body.items;
    expect(items[0]).toMatchObject({ input: { question: `question ${item.sdk_run_id.slice(2)}` }, expected_output: "The corrected answer.", source: "run", source_sdk_run_id: item.sdk_run_id });
    const next = (await post(`/api/annotation-queues/${queueId}/next`, {}, keys.bob)).body.item;
    expect((await post(`/api/annotation-queues/${queueId}/items/${next.id}/skip`, {}, keys.bob)).body.item.status).toBe("skipped");
    expect((await post(`/api/annotation-queues/${queueId}/items/${next.id}/skip`, {}, keys.bob)).status).toBe(409);
  });

  it("a review of an experiment's run is announced to the comparisons open on it", async () => {
    expect((await post("/api/datasets", { name: "experiment reviews" })).status).toBe(201);
    expect((await post("/api/datasets/experiment%20reviews/items", { items: [{ id: "one", input: { q: 1 } }] })).status).toBe(201);
    const experiment = (await post("/api/experiments", { dataset: "experiment reviews", name: "judged by people" })).body.experiment.id as string;
    const events = [
      { event_type: "run_start", sdk_run_id: "exp-review", agent_name: "support-bot", payload: { input: { q: 1 }, experiment_id: experiment, dataset_item_id: "one", repetition: 1 } },
      { event_type: "run_end", sdk_run_id: "exp-review", payload: { output: "42" } },
    ];
    expect((await post("/api/ingest/batch", { events })).body.rejected).toBe(0);
    await waitForRun(srv.url, keys.owner, "exp-review", (r) => r.run.status === "success");
    const q = (await post("/api/annotation-queues", { name: "experiment review", score_configs: [{ name: "right", type: "boolean" }] })).body.queue;
    expect((await post(`/api/annotation-queues/${q.id}/items`, { items: [{ sdk_run_id: "exp-review" }] })).status).toBe(201);
    const announced: string[][] = [];
    const stop = await srv.ports.pubsub.subscribePrefix(projectChannel(teamId), (_channel, message) => {
      const m = JSON.parse(message) as { type: string; experiment_ids: string[] };
      if (m.type === "experiment_scores") announced.push(m.experiment_ids);
    });
    try {
      const item = (await post(`/api/annotation-queues/${q.id}/next`, {}, keys.bob)).body.item;
      expect((await post(`/api/annotation-queues/${q.id}/items/${item.id}/complete`, { scores: [{ name: "right", value: true }] }, keys.bob)).status).toBe(200);
      await until("the announcement", () => announced, (a) => a.length > 0, 5_000);
      expect(announced).toEqual([[experiment]]);
    } finally {
      await stop();
    }
  });

  it("a lock that ran out goes to the next reviewer", async () => {
    await post(`/api/annotation-queues/${queueId}/items`, { items: [{ sdk_run_id: "q-32" }] });
    const held = (await post(`/api/annotation-queues/${queueId}/next`, {}, keys.bob)).body.item;
    expect((await post(`/api/annotation-queues/${queueId}/next`, {}, keys.carol)).status).toBe(204);
    await srv.ports.sql.query(`UPDATE annotation_queue_items SET locked_until = now() - interval '1 second' WHERE id = $1`, [held.id]);
    expect((await post(`/api/annotation-queues/${queueId}/next`, {}, keys.carol)).body.item.id).toBe(held.id);
  });

  it("a queue with members takes reviews from them only", async () => {
    const q = await post("/api/annotation-queues", { name: "carol only", score_configs: [{ name: "ok", type: "boolean" }], members: [emails.carol] });
    await post(`/api/annotation-queues/${q.body.queue.id}/items`, { items: [{ sdk_run_id: "q-33" }] });
    expect((await post(`/api/annotation-queues/${q.body.queue.id}/next`, {}, keys.bob)).status).toBe(403);
    expect((await post(`/api/annotation-queues/${q.body.queue.id}/next`, {}, keys.carol)).status).toBe(200);
  });

  it("an online rule adds the runs its check fails to the queue", async () => {
    const q = await post("/api/annotation-queues", { name: "apologies", score_configs: [{ name: "ok", type: "boolean" }] });
    const check = await post("/api/evaluators", { name: "no apology", type: "builtin", check: { kind: "regex", pattern: "^(?i)(?:sorry|apolog)" } });
    const ok = await post("/api/evaluators", { name: "never sorry", type: "builtin", check: { kind: "contains", value: "sorry" } });
    expect(ok.status).toBe(201);
    expect(check.status).toBe(201);
    await post("/api/evaluation-rules", { evaluator_id: ok.body.evaluator.id, filter: { agent_name: "support-bot" }, sampling: 1, queue_action: { queue_id: q.body.queue.id, equals: true } });
    const events = Array.from({ length: 8 }, (_, i) => [
      { event_type: "run_start", sdk_run_id: `late-${i}`, agent_name: "support-bot", payload: {} },
      { event_type: "run_end", sdk_run_id: `late-${i}`, payload: { output: i < 3 ? "Sorry, no." : "Done." } },
    ]).flat();
    await fetch(`${srv.url}/api/ingest/batch`, json(keys.owner, { events }));
    for (let i = 0; i < 100; i++) {
      if ((await get(`/api/annotation-queues/${q.body.queue.id}`)).body.progress.pending === 3) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const queued = (await get(`/api/annotation-queues/${q.body.queue.id}`)).body;
    expect(queued.items.map((i: { sdk_run_id: string; source: string }) => `${i.sdk_run_id}:${i.source}`).sort()).toEqual(["late-0:rule", "late-1:rule", "late-2:rule"]);
    expect((await get("/api/runs/late-5/scores")).body.scores[0]).toMatchObject({ name: "never sorry", value: false, source: "check" });
  });

  it("deletes a queue with its items and the rules that fill it; a judging rule keeps judging without it", async () => {
    const q = (await post("/api/annotation-queues", { name: "to delete", score_configs: [{ name: "ok", type: "boolean" }] })).body.queue;
    expect((await post(`/api/annotation-queues/${q.id}/items`, { items: [{ sdk_run_id: "q-1" }, { sdk_run_id: "q-2" }] })).status).toBe(201);
    const routing = (await post("/api/evaluation-rules", { queue_action: { queue_id: q.id }, filter: { has_error: true } })).body.rule;
    const check = (await post("/api/evaluators", { name: "says done", type: "builtin", check: { kind: "contains", value: "Done" } })).body.evaluator;
    const judging = (await post("/api/evaluation-rules", { evaluator_id: check.id, filter: { agent_name: "tidy-bot" }, sampling: 1, queue_action: { queue_id: q.id, equals: false } })).body.rule;

    expect((await call("DELETE", `/api/annotation-queues/${q.id}`, undefined, keys.dave)).status).toBe(403);
    expect((await call("DELETE", `/api/annotation-queues/${q.id}`, undefined, keys.outsider)).status).toBe(404);
    expect((await call("DELETE", "/api/annotation-queues/not-a-uuid", undefined, keys.bob)).status).toBe(404);
    expect((await call("DELETE", `/api/annotation-queues/${q.id}`, undefined, keys.bob)).status).toBe(204);
    expect((await call("DELETE", `/api/annotation-queues/${q.id}`, undefined, keys.bob)).status).toBe(404);
    expect((await get(`/api/annotation-queues/${q.id}`)).status).toBe(404);
    expect((await get(`/api/evaluation-rules/${routing.id}`)).status).toBe(404);
    expect((await get(`/api/evaluation-rules/${judging.id}`)).body.rule).toMatchObject({ evaluator_id: check.id, queue_action: null, enabled: true });
    expect((await srv.ports.sql.query("SELECT count(*)::int AS n FROM annotation_queue_items WHERE queue_id = $1", [q.id]))[0]).toEqual({ n: 0 });
    expect((await auditLog(srv.ports.sql, teamId)).find((e) => e.action === "annotation_queue.delete")).toMatchObject({ target: "to delete" });

    // The pipeline goes on: an error run (the deleted routing rule's) is stored, and the judging rule still scores.
    const events = [
      { event_type: "run_start", sdk_run_id: "tidy-1", agent_name: "tidy-bot", payload: {} },
      { event_type: "error", sdk_run_id: "tidy-1", payload: { error_type: "RuntimeError", error_message: "boom" } },
      { event_type: "run_start", sdk_run_id: "tidy-2", agent_name: "tidy-bot", payload: {} },
      { event_type: "run_end", sdk_run_id: "tidy-2", payload: { output: "Not yet." } },
    ];
    expect((await post("/api/ingest/batch", { events })).body.rejected).toBe(0);
    await waitForRun(srv.url, keys.owner, "tidy-1", (r) => r.run.status === "error");
    const scores = await until("the judging rule's score", () => get("/api/runs/tidy-2/scores"), (r) => r.body.scores?.length === 1, 20_000);
    expect(scores.body.scores[0]).toMatchObject({ name: "says done", value: false });
  });
});

/**
 * What the activation gate trusts (docs/EVALUATION.md), over real HTTP as the attacker with a viewer's key and an
 * ingest-only key would try it: a viewer's key cannot make an experiment; an experiment a viewer made (before that
 * rule, or as a member since demoted) is not the one compared; runs and perfect scores an ingest key sends — through
 * the scores API or inside its events, for a new experiment or for the real one — change nothing; a member's
 * experiment scored only by an ingest key is a refusal, not a pass. Scores of a member's read+ingest key count. Every
 * activation, forced or not, is in the audit log naming the experiments it was judged on, as the answer does.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, createProject, setMember } from "../../stores/accounts/projects.js";
import { setGateRule } from "../../stores/activation-gate.js";
import { addVersion, createAgent } from "../../stores/agent-registry.js";
import { datasetNamed } from "../../stores/datasets/datasets.js";
import { createExperiment } from "../../stores/datasets/experiments.js";
import { bearer, json, startTestServer, waitForRun, type TestServer } from "./harness.js";

let srv: TestServer;
let team: { id: number; slug: string };
const keys = { owner: "", member: "", viewer: "", ingest: "" };
let viewerId = 0;

const post = async (path: string, body: unknown, key: string) => {
  const res = await fetch(`${srv.url}${path}`, json(key, body));
  return { status: res.status, body: (await res.json()) as any };
};
const activate = (version: number, key = keys.owner, body: unknown = {}) => post(`/api/agents/qa-bot/configs/${version}/activate`, body, key);

/** Runs of `experimentId` for items i0..i3, sent with `key`, each ending with `inEvent` scores in its payload. */
async function runs(key: string, experimentId: string, prefix: string, version: number, inEvent: unknown[] = []) {
  const events = [0, 1, 2, 3].flatMap((i) => [
    { event_type: "run_start", sdk_run_id: `${prefix}-${i}`, agent_name: "qa-bot", config_version: version, payload: { experiment_id: experimentId, dataset_item_id: `i${i}`, repetition: 1 } },
    { event_type: "run_end", sdk_run_id: `${prefix}-${i}`, payload: { output: "answer", scores: inEvent } },
  ]);
  expect((await post("/api/ingest/batch", { events }, key)).body).toMatchObject({ rejected: 0 });
  for (let i = 0; i < 4; i++) await waitForRun(srv.url, keys.owner, `${prefix}-${i}`, (b) => b.run.status === "success");
}

/** Gives each of the runs `prefix`-0..3 the score `values[i]`, through the scores API with `key`. */
async function score(key: string, prefix: string, values: number[]) {
  const res = await post("/api/scores/batch", { scores: values.map((value, i) => ({ sdk_run_id: `${prefix}-${i}`, name: "correctness", value, source: "llm_judge" })) }, key);
  expect(res.body.results.map((r: { status: number }) => r.status)).toEqual(values.map(() => 201));
}

async function experiment(key: string, name: string, version: number): Promise<string> {
  const res = await post("/api/experiments", { dataset: "gate set", name, agent_name: "qa-bot", config_version: version }, key);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.experiment.id as string;
}

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } });
  const [owner, member, viewer] = [await srv.user(), await srv.user(), await srv.user()];
  viewerId = viewer.id;
  team = await createProject(srv.ports.sql, owner.id, "Gate trust");
  await setMember(srv.ports.sql, team.id, member.email, "member", owner.id);
  await setMember(srv.ports.sql, team.id, viewer.email, "viewer", owner.id);
  keys.owner = await srv.key(owner.id, { projectId: team.id });
  keys.member = await srv.key(member.id, { projectId: team.id });
  keys.viewer = await srv.key(viewer.id, { projectId: team.id });
  keys.ingest = await srv.key(member.id, { projectId: team.id, scope: "ingest" });
  await createAgent(srv.ports.sql, team.id, { name: "qa-bot" });
  for (const n of [1, 2]) await addVersion(srv.ports.sql, team.id, "qa-bot", { config: JSON.stringify({ prompt: `v${n}` }), activate: n === 1 });
  await post("/api/datasets", { name: "gate set" }, keys.owner);
  await post("/api/datasets/gate%20set/items", { items: [0, 1, 2, 3].map((i) => ({ id: `i${i}`, input: i })) }, keys.owner);
  // The real experiments, by the owner: version 2 scores lower than version 1.
  await runs(keys.owner, await experiment(keys.owner, "v1", 1), "v1", 1);
  await score(keys.owner, "v1", [1, 1, 1, 0.6]); // mean 0.9
  await runs(keys.owner, await experiment(keys.owner, "v2", 2), "v2", 2);
  await score(keys.owner, "v2", [1, 0, 1, 0]); // mean 0.5
  await setGateRule(srv.ports.sql, team.id, "qa-bot", { score_name: "correctness", max_drop: 0.05 }, owner.id);
}, 120_000);
afterAll(async () => {
  await srv?.close();
});

describe("the activation gate's trust", () => {
  it("refuses version 2 on the real experiments, and the answer says which ones", async () => {
    const refused = await activate(2);
    expect(refused.status).toBe(409);
    expect(refused.body.error.violations).toEqual([{ score: "correctness", active_mean: 0.9, candidate_mean: 0.5, max_drop: 0.05 }]);
    expect(refused.body.gate.basis).toMatch(/^version 2's experiment "v2" \([0-9a-f-]{36}, made by .+\) on dataset "gate set" against active version 1's experiment "v1"/);
  });

  it("a viewer's key cannot make an experiment; one a viewer made anyway is not the one compared", async () => {
    const byViewer = await post("/api/experiments", { dataset: "gate set", name: "v2 fake", agent_name: "qa-bot", config_version: 2 }, keys.viewer);
    expect(byViewer.status).toBe(403);
    // One made by a viewer (a member since demoted, or made before viewers were refused), the newest of version 2,
    // with runs and perfect scores from the ingest-only key.
    const dataset = await datasetNamed(srv.ports.sql, team.id, "gate set");
    const fake = await createExperiment(srv.ports.sql, team.id, dataset, { dataset: "gate set", name: "v2 by a viewer", agent_name: "qa-bot", config_version: 2 }, viewerId);
    await runs(keys.ingest, fake.id, "fake", 2, [{ name: "correctness", value: 1, source: "human" }]);
    await score(keys.ingest, "fake", [1, 1, 1, 1]);
    const refused = await activate(2);
    expect(refused.status).toBe(409);
    expect(refused.body.gate.candidate_experiment).toMatchObject({ name: "v2", scores: { correctness: { mean: 0.5, count: 4 } } });
  });

  it("runs and perfect scores an ingest key sends for the real experiment change nothing", async () => {
    const real = (await (await fetch(`${srv.url}/api/experiments?dataset=gate%20set&name=v2`, bearer(keys.viewer))).json()).experiments[0].id as string;
    // Newer runs of every item, scored 1 in their events and through the scores API (claiming to be a judge's).
    await runs(keys.ingest, real, "replay", 2, [{ name: "correctness", value: 1 }]);
    await score(keys.ingest, "replay", [1, 1, 1, 1]);
    await score(keys.ingest, "v2", [1, 1, 1, 1]);
    // The experiment's own page shows the newest runs and scores; the gate counts what it trusts.
    expect((await (await fetch(`${srv.url}/api/experiments/${real}`, bearer(keys.owner))).json()).experiment.scores.correctness.mean).toBe(1);
    const refused = await activate(2);
    expect(refused.status).toBe(409);
    expect(refused.body.error.violations).toEqual([{ score: "correctness", active_mean: 0.9, candidate_mean: 0.5, max_drop: 0.05 }]);
    // A viewer's read+ingest key is no better than an ingest key (refused, or taken and not counted).
    const byViewer = await post("/api/scores/batch", { scores: [0, 1, 2, 3].map((i) => ({ sdk_run_id: `v2-${i}`, name: "correctness", value: 1 })) }, keys.viewer);
    expect([207, 403]).toContain(byViewer.status);
    expect((await activate(2)).body.error.violations[0].candidate_mean).toBe(0.5);
  });

  it("a member's experiment scored only by an ingest key is refused, not let through; a member's read+ingest key's scores count", async () => {
    const unscored = await experiment(keys.member, "v2 again", 2);
    await runs(keys.ingest, unscored, "again", 2, [{ name: "correctness", value: 1 }]);
    await score(keys.ingest, "again", [1, 1, 1, 1]);
    const refused = await activate(2);
    expect(refused.status).toBe(409);
    expect(refused.body.error.violations).toEqual([{ score: "correctness", active_mean: 0.9, candidate_mean: null, max_drop: 0.05 }]);
    expect(refused.body.error.message).toContain(`score "correctness" has no counted value in version 2's experiment "v2 again"`);

    await score(keys.member, "again", [1, 1, 0.9, 0.8]); // mean 0.925
    const passed = await activate(2);
    expect([passed.status, passed.body.forced]).toEqual([200, false]);
    expect(passed.body.gate.candidate_experiment).toMatchObject({ id: unscored, name: "v2 again", scores: { correctness: { mean: 0.925, count: 4 } } });
    expect(passed.body.gate.basis).toContain(`version 2's experiment "v2 again" (${unscored}`);
  });

  it("every activation, forced or not, is in the audit log with the experiments it was judged on", async () => {
    // Version 1 scores 0.9 against version 2's 0.925: a rule that allows no drop refuses it; the owner forces it.
    await setGateRule(srv.ports.sql, team.id, "qa-bot", { score_name: "correctness", max_drop: 0 }, null);
    expect((await activate(1)).status).toBe(409);
    const back = await activate(1, keys.owner, { force: true, reason: "roll back" });
    expect([back.status, back.body.forced]).toEqual([200, true]);
    const entries = (await auditLog(srv.ports.sql, team.id)).filter((e) => e.action.startsWith("agent.activat"));
    expect(entries.map((e) => [e.action, e.target])).toEqual([["agent.activation_forced", "qa-bot v1"], ["agent.activated", "qa-bot v2"]]);
    expect(entries[1]!.details).toMatchObject({
      previous_version: 1, candidate_experiment: { name: "v2 again" }, active_experiment: { name: "v1" },
      basis: expect.stringContaining(`version 2's experiment "v2 again"`),
    });
    expect(entries[0]!.details).toMatchObject({
      reason: "roll back", previous_version: 2, candidate_experiment: { name: "v1" }, active_experiment: { name: "v2 again" },
      violations: [{ score: "correctness", active_mean: 0.925, candidate_mean: 0.9 }],
    });
  });
});

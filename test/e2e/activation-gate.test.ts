/**
 * The activation gate over real HTTP (docs/EVALUATION.md): an agent's gate rule ("correctness may drop by at most
 * 0.05") refuses to activate a config version whose latest experiment scores lower than the active version's on
 * the same dataset: a 409 naming the score and both values, from the API and from the agent's page. An admin forces
 * it with a reason that the audit log keeps; a member cannot; a version that does not drop passes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, createProject, setMember } from "../../stores/accounts/projects.js";
import { addVersion, createAgent } from "../../stores/agent-registry.js";
import { bearer, csrfFrom, json, loginJar, startTestServer, type CookieJar, type TestAccount, type TestServer } from "./harness.js";

let srv: TestServer;
let owner: TestAccount;
let member: TestAccount;
let ownerKey: string;
let memberKey: string;
let team: { id: number; slug: string };
let ownerJar: CookieJar;

const post = async (path: string, body: unknown, key = ownerKey) => {
  const res = await fetch(`${srv.url}${path}`, json(key, body));
  return { status: res.status, body: (await res.json()) as any };
};
const activeVersion = async () => (await (await fetch(`${srv.url}/api/agents/qa-bot/config`, bearer(ownerKey))).json()).version;

/** An experiment of `version` on dataset "gate set" whose items score `scores` on correctness. */
async function experiment(version: number, scores: number[]): Promise<string> {
  const { body } = await post("/api/experiments", { dataset: "gate set", name: `v${version}`, agent_name: "qa-bot", config_version: version });
  const id = body.experiment.id as string;
  const events = scores.flatMap((_, i) => [
    { event_type: "run_start", sdk_run_id: `v${version}-${i}`, agent_name: "qa-bot", config_version: version, payload: { experiment_id: id, dataset_item_id: `i${i}`, repetition: 1 } },
    { event_type: "run_end", sdk_run_id: `v${version}-${i}`, payload: { output: "answer" } },
  ]);
  expect((await post("/api/ingest/batch", { events })).body).toMatchObject({ rejected: 0 });
  for (let i = 0; i < scores.length; i++) {
    for (let tries = 0; ; tries++) {
      const res = await post("/api/scores", { sdk_run_id: `v${version}-${i}`, name: "correctness", value: scores[i] });
      if (res.status === 201) break;
      if (tries > 100) throw new Error(`score not stored: ${JSON.stringify(res.body)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return id;
}

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } });
  [owner, member] = [await srv.account(), await srv.account()];
  team = await createProject(srv.ports.sql, owner.id, "Gate team");
  await setMember(srv.ports.sql, team.id, member.email, "member", owner.id);
  ownerKey = await srv.key(owner.id, { projectId: team.id });
  memberKey = await srv.key(member.id, { projectId: team.id });
  await createAgent(srv.ports.sql, team.id, { name: "qa-bot" });
  for (const n of [1, 2, 3]) await addVersion(srv.ports.sql, team.id, "qa-bot", { config: JSON.stringify({ prompt: `v${n}` }), activate: n === 1 });
  await post("/api/datasets", { name: "gate set" });
  await post("/api/datasets/gate%20set/items", { items: [0, 1, 2, 3].map((i) => ({ id: `i${i}`, input: i })) });
  await experiment(1, [1, 1, 1, 0.6]); // mean 0.9
  await experiment(2, [1, 0, 1, 0]); // mean 0.5
  await experiment(3, [1, 1, 0.8, 0.7]); // mean 0.875: a drop of 0.025
  ownerJar = await loginJar(srv.url, owner.email);
  const csrf = csrfFrom(await (await ownerJar.fetch(`${srv.url}/dashboard`)).text());
  expect((await ownerJar.form(`${srv.url}/projects/switch`, { _csrf: csrf, project: team.slug })).status).toBe(303);
});
afterAll(async () => {
  await srv?.close();
});

describe("activation gate", () => {
  it("lets any version through until the agent has a rule", async () => {
    const res = await post("/api/agents/qa-bot/configs/2/activate", {});
    expect([res.status, res.body.forced, res.body.gate.candidate_experiment.scores.correctness.mean, res.body.gate.active_experiment.name]).toEqual([200, false, 0.5, "v1"]);
    expect((await post("/api/agents/qa-bot/configs/1/activate", {})).status).toBe(200);
    expect(await activeVersion()).toBe(1);
  });

  it("refuses a version whose score dropped more than the rule allows, naming the score and both values", async () => {
    const page = await (await ownerJar.fetch(`${srv.url}/agents/qa-bot`)).text();
    const form = await ownerJar.fetch(`${srv.url}/agents/qa-bot/gate`, { method: "POST", body: new URLSearchParams({ _csrf: csrfFrom(page), score_name: "correctness", max_drop: "0.05" }) });
    expect(form.status).toBe(303);

    const refused = await post("/api/agents/qa-bot/configs/2/activate", {});
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: "gate_refused", field: "force", violations: [{ score: "correctness", active_mean: 0.9, candidate_mean: 0.5, max_drop: 0.05 }] });
    expect(refused.body.error.message).toMatch(/"correctness" mean would drop from 0\.9 \(active version 1.*to 0\.5 \(version 2/);
    expect(await activeVersion()).toBe(1);

    // From the agent's page: the refusal, both experiments side by side, and the owner's force form.
    const html = await (await ownerJar.fetch(`${srv.url}/agents/qa-bot`)).text();
    const res = await ownerJar.fetch(`${srv.url}/agents/qa-bot/configs/2/activate`, { method: "POST", body: new URLSearchParams({ _csrf: csrfFrom(html) }) });
    const refusal = await res.text();
    expect(res.status).toBe(409);
    expect(refusal).toContain("The gate refused version 2");
    expect(refusal).toMatch(/href="\/p\/[a-z0-9-]+\/agents\/qa-bot\/configs\/2\/gate">Review and force the activation of v2/);
    const gate = await (await ownerJar.fetch(`${srv.url}/agents/qa-bot/configs/2/gate`)).text();
    expect(gate).toContain("“correctness” would drop from 0.900 to 0.500 (at most 0.05 allowed)");
    expect(gate).toContain("Force activation of v2");
    expect(gate).not.toContain(">Activate v2<");
    expect(await activeVersion()).toBe(1);

    // A drop within the rule passes.
    expect((await post("/api/agents/qa-bot/configs/3/activate", {})).body).toMatchObject({ version: 3, forced: false });
    expect((await post("/api/agents/qa-bot/configs/1/activate", {})).status).toBe(200);
  });

  it("is forced only by an admin or the owner, with a reason the audit log keeps", async () => {
    expect((await post("/api/agents/qa-bot/configs/2/activate", { force: true }, memberKey)).status).toBe(403);
    expect((await post("/api/agents/qa-bot/configs/2/activate", { force: true })).body.error).toMatchObject({ field: "reason" });
    expect((await post("/api/agents/qa-bot/configs/2/activate", { force: "yes" })).body.error).toMatchObject({ field: "force" });
    expect(await activeVersion()).toBe(1);

    const forced = await post("/api/agents/qa-bot/configs/2/activate", { force: true, reason: "hotfix: v1 leaks a prompt" });
    expect([forced.status, forced.body.forced]).toEqual([200, true]);
    expect(await activeVersion()).toBe(2);
    // What an SDK fetches names the active version's experiment.
    const fetched = await (await fetch(`${srv.url}/api/agents/qa-bot/config`, bearer(ownerKey))).json();
    expect(fetched.experiment).toMatchObject({ name: "v2", dataset: "gate set", dataset_version: 1 });
    const entry = (await auditLog(srv.ports.sql, team.id)).find((e) => e.action === "agent.activation_forced");
    expect(entry).toMatchObject({ target: "qa-bot v2", details: { reason: "hotfix: v1 leaks a prompt", violations: [{ score: "correctness" }] } });

    // From the page, as the owner.
    await post("/api/agents/qa-bot/configs/1/activate", {});
    const html = await (await ownerJar.fetch(`${srv.url}/agents/qa-bot/configs/2/gate`)).text();
    const empty = await ownerJar.fetch(`${srv.url}/agents/qa-bot/configs/2/force`, { method: "POST", body: new URLSearchParams({ _csrf: csrfFrom(html), reason: "  " }) });
    expect(empty.status).toBe(422);
    const res = await ownerJar.fetch(`${srv.url}/agents/qa-bot/configs/2/force`, { method: "POST", body: new URLSearchParams({ _csrf: csrfFrom(html), reason: "accepted by the team" }) });
    expect(res.status).toBe(303);
    expect(await activeVersion()).toBe(2);
  });

  it("answers hostile input with a 4xx naming the field", async () => {
    for (const v of ["0", "-1", "1.5", "99999999999", "x"]) expect((await post(`/api/agents/qa-bot/configs/${v}/activate`, {})).status, v).toBe(422);
    expect((await post("/api/agents/qa-bot/configs/99/activate", {})).status).toBe(404);
    expect((await post("/api/agents/nobody/configs/1/activate", {})).status).toBe(404);
    expect((await post("/api/agents/qa-bot/configs/1/activate", [])).status).toBe(422);
    expect((await post("/api/agents/qa-bot/configs/1/activate", { force: true, reason: "x".repeat(3_000) })).status).toBeLessThan(500);
    const outsider = await srv.account();
    expect((await post("/api/agents/qa-bot/configs/1/activate", {}, outsider.key)).status).toBe(404);
    const page = await (await ownerJar.fetch(`${srv.url}/agents/qa-bot`)).text();
    // The dashboard's version routes refuse a version past Postgres's integer as the API does (not a 500).
    for (const v of ["0", "1.5", "99999999999", "x"]) {
      for (const action of ["activate", "force"]) {
        const res = await ownerJar.fetch(`${srv.url}/agents/qa-bot/configs/${v}/${action}`, { method: "POST", body: new URLSearchParams({ _csrf: csrfFrom(page), reason: "r" }) });
        expect(res.status, `${action} ${v}`).toBe(422);
      }
      expect((await ownerJar.fetch(`${srv.url}/agents/qa-bot/configs/${v}/gate`)).status, `gate ${v}`).toBe(422);
    }
    for (const [score_name, max_drop, field] of [["", "0.1", "score_name"], ["c", "-1", "max_drop"], ["c", "1e309", "max_drop"], ["c", "abc", "max_drop"], ["a\u0000b", "1", "score_name"]]) {
      const res = await ownerJar.fetch(`${srv.url}/agents/qa-bot/gate`, { method: "POST", body: new URLSearchParams({ _csrf: csrfFrom(page), score_name: score_name!, max_drop: max_drop! }) });
      expect([res.status, field], `${score_name} ${max_drop}`).toEqual([422, field]);
    }
  });
});

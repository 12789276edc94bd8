/**
 * Experiments over prompt versions over real HTTP (docs/PROMPTS.md): the experiments API names the prompt version an
 * experiment ran (both fields or neither, a version the project has), and the prompt's page lists each version's
 * experiments with their scores, linking the comparison with production's experiment on the same dataset. Then the
 * gate: a rule refuses to move `production` to a version whose experiment regresses against production's (409 naming
 * the rule and both experiments, from the API, the page and the operator's command), passes a better one, is forced
 * by an admin with a reason the audit log keeps, and never by a member.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdmin } from "../../deploy/admin.js";
import { auditLog, createProject, setMember } from "../../stores/accounts/projects.js";
import { switchProject } from "../../stores/accounts/current-project.js";
import { bearer, csrfFrom, json, loginJar, startTestServer, type CookieJar, type TestServer } from "./harness.js";

let srv: TestServer;
let team: { id: number; slug: string };
let key: string;
let ownerKey: string;
let jar: CookieJar;
let ownerJar: CookieJar;

const post = async (path: string, body: unknown, method = "POST", as = key) => {
  const res = await fetch(`${srv.url}${path}`, { ...json(as, body), method });
  return { status: res.status, body: (await res.json()) as any };
};

/** An experiment of prompt version `version` on dataset "prompt set" whose items score `scores` on correctness. */
async function experiment(version: number, scores: number[]): Promise<string> {
  const { status, body } = await post("/api/experiments", { dataset: "prompt set", name: `prompt v${version}`, prompt_name: "answer", prompt_version: version });
  expect(status).toBe(201);
  const id = body.experiment.id as string;
  const events = scores.flatMap((_, i) => [
    { event_type: "run_start", sdk_run_id: `p${version}-${i}`, agent_name: "qa-bot", payload: { experiment_id: id, dataset_item_id: `i${i}`, repetition: 1 } },
    { event_type: "run_end", sdk_run_id: `p${version}-${i}`, payload: { output: "answer" } },
  ]);
  expect((await post("/api/ingest/batch", { events })).body).toMatchObject({ rejected: 0 });
  for (let i = 0; i < scores.length; i++) {
    for (let tries = 0; ; tries++) {
      const res = await post("/api/scores", { sdk_run_id: `p${version}-${i}`, name: "correctness", value: scores[i] });
      if (res.status === 201) break;
      if (tries > 100) throw new Error(`score not stored: ${JSON.stringify(res.body)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return id;
}

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } });
  const owner = await srv.account();
  team = await createProject(srv.ports.sql, owner.id, "Prompt experiments");
  const member = await srv.account();
  await setMember(srv.ports.sql, team.id, member.email, "member", owner.id);
  for (const u of [owner, member]) await switchProject(srv.ports.sql, u.id, team.slug);
  key = await srv.key(member.id, { projectId: team.id });
  ownerKey = await srv.key(owner.id, { projectId: team.id });
  jar = await loginJar(srv.url, member.email);
  ownerJar = await loginJar(srv.url, owner.email);
  for (const text of ["Answer {{question}}", "Answer {{question}} briefly"]) expect((await post("/api/prompts/answer/versions", { prompt: text })).status).toBe(201);
  expect((await post("/api/prompts/answer/labels/production", { version: 1 }, "PUT")).status).toBe(200);
  await post("/api/datasets", { name: "prompt set" });
  await post("/api/datasets/prompt%20set/items", { items: [0, 1, 2, 3].map((i) => ({ id: `i${i}`, input: i })) });
});
afterAll(async () => {
  await srv?.close();
});

describe("experiments over prompt versions", () => {
  it("refuses a prompt version the experiment cannot name, naming the field", async () => {
    const base = { dataset: "prompt set", name: "bad" };
    expect((await post("/api/experiments", { ...base, prompt_name: "answer" })).body.error).toMatchObject({ field: "prompt_version" });
    expect((await post("/api/experiments", { ...base, prompt_version: 1 })).body.error).toMatchObject({ field: "prompt_name" });
    const missing = await post("/api/experiments", { ...base, prompt_name: "nope", prompt_version: 1 });
    expect([missing.status, missing.body.error.field]).toEqual([422, "prompt_name"]);
    const beyond = await post("/api/experiments", { ...base, prompt_name: "answer", prompt_version: 3 });
    expect([beyond.status, beyond.body.error.field, beyond.body.error.message]).toEqual([422, "prompt_version", expect.stringContaining("versions 1 to 2")]);
    expect((await post("/api/experiments", { ...base, prompt_name: "a b", prompt_version: 1 })).body.error).toMatchObject({ field: "prompt_name" });
  });

  it("lists each version's experiments on the prompt's page, linking the comparison with production's", async () => {
    const v1 = await experiment(1, [1, 1, 1, 0.6]);
    const v2 = await experiment(2, [1, 0, 1, 0]);
    const listed = (await (await fetch(`${srv.url}/api/experiments?dataset=prompt%20set`, bearer(key))).json()) as any;
    expect(listed.experiments.map((e: any) => [e.name, e.prompt_name, e.prompt_version, e.scores.correctness.mean])).toEqual([
      ["prompt v2", "answer", 2, 0.5], ["prompt v1", "answer", 1, 0.9],
    ]);

    const html = await (await jar.fetch(`${srv.url}/p/${team.slug}/prompts/answer`)).text();
    const rows = html.slice(html.indexOf('id="experiments"'), html.indexOf('id="diff"'));
    expect(rows).toMatch(new RegExp(`data-experiment="${v2}" data-version="2">[\\s\\S]*?prompt v2[\\s\\S]*?correctness 0.5[\\s\\S]*?` +
      `compare\\?experiments=${v1},${v2}&amp;baseline=${v1}">Compare with production \\(v1\\)`));
    expect(rows).toMatch(new RegExp(`data-experiment="${v1}" data-version="1">[\\s\\S]*?correctness 0.9`));
    // The link opens the comparison the datasets pages already have.
    const compare = await jar.fetch(`${srv.url}/p/${team.slug}/datasets/prompt%20set/compare?experiments=${v1},${v2}&baseline=${v1}`);
    expect(compare.status).toBe(200);
    expect(await compare.text()).toContain("prompt v2");
  });
});

describe("the gate on production", () => {
  const production = async () => (await (await fetch(`${srv.url}/api/prompts/answer?label=production`, bearer(key))).json()).prompt.version;
  const move = (version: number, extra: Record<string, unknown> = {}, as = key) => post("/api/prompts/answer/labels/production", { version, ...extra }, "PUT", as);

  it("refuses a version whose experiment regresses beyond a rule, naming it and both experiments", async () => {
    expect((await post("/api/prompts/answer/versions", { prompt: "Answer {{question}} kindly" })).status).toBe(201);
    await experiment(3, [1, 1, 0.8, 0.7]); // mean 0.875: a drop of 0.025 from v1's 0.9
    // Without a rule every version passes.
    expect((await move(2)).body).toMatchObject({ version: 2, previous: 1, forced: false, gate: { violations: [] } });
    expect((await move(1)).status).toBe(200);

    expect((await post("/api/prompts/answer/gate/rules/correctness", { max_drop: -1 }, "PUT")).body.error).toMatchObject({ field: "max_drop" });
    expect((await post("/api/prompts/answer/gate/rules/correctness", { max_drop: 0.05 }, "PUT")).body).toEqual({ rule: { score_name: "correctness", max_drop: 0.05 } });
    const refused = await move(2);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: "gate_refused", field: "force", violations: [{ score: "correctness", active_mean: 0.9, candidate_mean: 0.5, max_drop: 0.05 }] });
    expect(refused.body.error.message).toMatch(/"correctness" mean would drop from 0\.9 \(production version 1, experiment "prompt v1"\) to 0\.5 \(version 2, experiment "prompt v2"\)/);
    expect([refused.body.gate.active_experiment.name, refused.body.gate.candidate_experiment.name]).toEqual(["prompt v1", "prompt v2"]);
    expect(await production()).toBe(1);
    const check = (await (await fetch(`${srv.url}/api/prompts/answer/gate?version=2`, bearer(key))).json()) as any;
    expect(check.gate.violations).toEqual(refused.body.error.violations);

    // Other labels move freely; a version within the rule passes, and the audit names what it was judged on.
    expect((await post("/api/prompts/answer/labels/staging", { version: 2 }, "PUT")).status).toBe(200);
    expect((await move(3)).body).toMatchObject({ version: 3, previous: 1, forced: false });
    const entry = (await auditLog(srv.ports.sql, team.id)).find((e) => e.action === "prompt.label" && (e.details as any).version === 3);
    expect(entry?.details).toMatchObject({ label: "production", from: 1, candidate_experiment: { name: "prompt v3" }, active_experiment: { name: "prompt v1" } });
    expect((await move(1)).status).toBe(200); // back to v1: 0.9 against 0.875 is no drop
  });

  it("is forced only by an admin or the owner, with a reason the audit log keeps", async () => {
    expect((await move(2, { force: true, reason: "member says so" })).status).toBe(403);
    expect((await move(2, { force: true }, ownerKey)).body.error).toMatchObject({ field: "reason" });
    expect((await move(2, { force: "yes" }, ownerKey)).body.error).toMatchObject({ field: "force" });
    expect(await production()).toBe(1);
    const forced = await move(2, { force: true, reason: "v1 leaks the system prompt" }, ownerKey);
    expect([forced.status, forced.body.forced, forced.body.previous]).toEqual([200, true, 1]);
    expect(await production()).toBe(2);
    const entry = (await auditLog(srv.ports.sql, team.id)).find((e) => e.action === "prompt.label_forced");
    expect(entry).toMatchObject({ target: "answer production", details: { reason: "v1 leaks the system prompt", from: 1, version: 2, violations: [{ score: "correctness" }] } });
    expect((await move(1)).status).toBe(200);
  });

  it("refuses from the page, where only an admin sees the force form", async () => {
    const path = `${srv.url}/p/${team.slug}/prompts/answer`;
    const form = async (j: CookieJar, fields: Record<string, string>) => {
      const csrf = csrfFrom(await (await j.fetch(path)).text());
      return j.fetch(`${path}/labels`, { method: "POST", body: new URLSearchParams({ _csrf: csrf, ...fields }) });
    };
    const asMember = await form(jar, { label: "production", version: "2" });
    const memberHtml = await asMember.text();
    expect(asMember.status).toBe(409);
    expect(memberHtml).toContain("production of answer was not moved to version 2");
    expect(memberHtml).not.toContain('id="force-label"');
    expect((await form(jar, { label: "production", version: "2", force: "on", reason: "please" })).status).toBe(403);

    const asOwner = await form(ownerJar, { label: "production", version: "2" });
    expect(asOwner.status).toBe(409);
    expect(await asOwner.text()).toContain("Force production to v2");
    expect((await form(ownerJar, { label: "production", version: "2", force: "on", reason: "" })).status).toBe(422);
    expect((await form(ownerJar, { label: "production", version: "2", force: "on", reason: "hotfix" })).status).toBe(303);
    expect(await production()).toBe(2);
    expect((await move(1)).status).toBe(200);
  });

  it("refuses the operator's command unless forced", async () => {
    const ports = { sql: srv.ports.sql, ch: srv.ports.clickhouse };
    const req = { cmd: "prompt.label" as const, project: team.slug, name: "answer", label: "production", version: 2 };
    await expect(runAdmin(ports, req)).rejects.toMatchObject({ _tag: "Conflict", code: "gate_refused" });
    expect(await runAdmin(ports, { ...req, force: true, reason: "operator rollback" })).toMatchObject({ version: 2, previous: 1, forced: true });
    expect(await production()).toBe(2);
  });
});

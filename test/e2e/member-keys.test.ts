/**
 * A key acts with its creator's current role in its project, and access a member loses is lost at once, over real
 * HTTP as a demoted or removed admin would try it (docs/TEAMS.md, API keys): an admin's key, its creator demoted to
 * viewer, still reads but changes nothing and sends nothing; removed, their keys are revoked (and stay so if they come
 * back) and their open invitations with them, which the page says and the audit log records; a deleted project's key
 * is refused at once, not when the key cache expires (10 s). Every key is used before the change, so that a cached
 * copy is what the change must reach.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, setMember } from "../../stores/accounts/projects.js";
import { bearer, CookieJar, csrfFrom, json, loginJar, startTestServer, type TestServer } from "./harness.js";

let srv: TestServer;
const tag = Math.random().toString(36).slice(2, 8);

beforeAll(async () => {
  srv = await startTestServer({ env: { SMTP_HOST: "" } });
});
afterAll(async () => {
  await srv?.close();
});

const send = (key: string, method: string, path: string, body?: unknown) =>
  fetch(`${srv.url}${path}`, body === undefined ? { method, headers: { authorization: `Bearer ${key}` } } : { ...json(key, body), method });

/** The owner's session on the project's settings page, and a way to post its forms. */
async function ownerPage(email: string, slug: string) {
  const jar = await loginJar(srv.url, email);
  const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/settings/project?project=${slug}`)).text());
  const post = (action: string, fields: Record<string, string>) => jar.form(`${srv.url}/settings/project/${slug}/${action}`, { _csrf: csrf, ...fields });
  /** The page a redirect after a form leads to. */
  const follow = async (res: Response) => (await jar.fetch(new URL(res.headers.get("location")!, srv.url).toString())).text();
  return { jar, post, follow };
}

/** A project with an owner, and an admin who made a key and invited someone as admin (the link, as the page shows it). */
async function teamWithAdmin(name: string) {
  const owner = await srv.user(`owner-${name}-${tag}@example.com`);
  const adm = await srv.user(`adm-${name}-${tag}@example.com`);
  const project = await createProject(srv.ports.sql, owner.id, `${name} ${tag}`);
  await setMember(srv.ports.sql, project.id, adm.email, "admin", owner.id);
  const key = await srv.key(adm.id, { projectId: project.id, name: `${name} agent` });
  const admJar = await loginJar(srv.url, adm.email);
  const admCsrf = csrfFrom(await (await admJar.fetch(`${srv.url}/settings/project?project=${project.slug}`)).text());
  const sleeper = `sleeper-${name}-${tag}@example.com`;
  const invited = await admJar.form(`${srv.url}/settings/project/${project.slug}/invitations`, { _csrf: admCsrf, email: sleeper, role: "admin" });
  expect(invited.status).toBe(201);
  const link = /\/invitations\/([0-9a-f]{64})/.exec(await invited.text())![1]!;
  return { owner, adm, project, key, sleeper, link };
}

/** Registers `email` through an invitation's link, opens it and accepts it (a forged post if the page has no form). */
async function registerAndAccept(email: string, token: string): Promise<{ landing: number; status: number; jar: CookieJar }> {
  const jar = new CookieJar();
  const next = `/invitations/${token}`;
  const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/register?next=${encodeURIComponent(next)}`)).text());
  expect((await jar.form(`${srv.url}/register`, { _csrf: csrf, email, name: "Stranger", password: "correct horse battery", password_confirm: "correct horse battery", next })).status).toBe(302);
  const landing = await jar.fetch(`${srv.url}${next}`);
  await landing.arrayBuffer();
  const session = csrfFrom(await (await jar.fetch(`${srv.url}/settings/project`)).text());
  const accept = await jar.form(`${srv.url}${next}/accept`, { _csrf: session });
  return { landing: landing.status, status: accept.status, jar };
}

describe("API keys of members who lose their role", () => {
  it("a demoted admin's key reads but no longer writes or sends, at once; their open invitations are revoked", async () => {
    const { owner, adm, project, key, link } = await teamWithAdmin("demoted");
    expect((await send(key, "POST", "/api/datasets", { name: "before" })).status).toBe(201);
    expect((await send(key, "GET", "/api/runs")).status).toBe(200);

    const { post, follow } = await ownerPage(owner.email, project.slug);
    const demoted = await post("members", { email: adm.email, role: "viewer" });
    expect(demoted.status).toBe(302);
    const page = await follow(demoted);
    expect(page).toContain(`${adm.email} is now viewer. The API key they made here acts as viewer from now on.`);
    expect(page).toContain("Revoked the 1 open invitation");

    for (const path of ["/api/runs", "/api/datasets", "/api/evaluators", "/api/evaluation-settings"]) {
      expect([path, (await send(key, "GET", path)).status]).toEqual([path, 200]);
    }
    const evaluator = { name: "judge", type: "builtin", check: { kind: "contains", value: "ok" } };
    for (const [method, path, body] of [
      ["PUT", "/api/evaluation-settings", { daily_budget_usd: 1 }],
      ["POST", "/api/evaluators", evaluator],
      ["POST", "/api/evaluation-rules", { evaluator_id: "00000000-0000-4000-8000-000000000000", filter: {}, sampling: 1 }],
      ["POST", "/api/evaluation-rules/00000000-0000-4000-8000-000000000000/backfill", { confirm: true }],
      ["POST", "/api/datasets", { name: "after" }],
      ["PUT", "/api/provider-keys/openai", { key: "sk-test" }],
      ["POST", "/api/ingest", { event_type: "run_start", sdk_run_id: "demoted-1", agent_name: "bot", payload: {} }],
      ["POST", "/api/scores", { sdk_run_id: "demoted-1", name: "thumbs", value: true }],
      ["POST", "/v1/traces", { resourceSpans: [] }],
    ] as const) {
      const res = await send(key, method, path, body);
      expect([method, path, res.status]).toEqual([method, path, 403]);
      expect((await res.json()).error.message).toContain("now a viewer of its project");
    }
    // The invitation the admin sent before is dead: its link is not valid, whoever registers with the address.
    expect((await fetch(`${srv.url}/invitations/${link}`)).status).toBe(404);
  });

  it("a removed admin's keys and invitations are revoked, the page and the audit log say so, and coming back revives neither", async () => {
    const { owner, adm, project, key, sleeper, link } = await teamWithAdmin("removed");
    expect((await send(key, "GET", "/api/runs")).status).toBe(200);
    const { jar, post, follow } = await ownerPage(owner.email, project.slug);
    const removed = await post("members/remove", { email: adm.email });
    expect(removed.status).toBe(302);
    expect(await follow(removed)).toContain(
      `Removed ${adm.email}. Revoked the 1 API key (removed agent) they made here and the 1 open invitation (${sleeper}) they sent.`,
    );
    for (const [method, path, body] of [
      ["GET", "/api/runs", undefined], ["GET", "/api/datasets", undefined], ["PUT", "/api/evaluation-settings", { daily_budget_usd: 1 }],
      ["POST", "/api/evaluators", { name: "j", type: "builtin", check: { kind: "contains", value: "ok" } }],
      ["POST", "/api/ingest", { event_type: "run_start", sdk_run_id: "removed-1", agent_name: "bot", payload: {} }],
    ] as const) {
      const res = await send(key, method, path, body);
      expect([method, path, res.status]).toEqual([method, path, 401]);
    }
    // A stranger who registers the invited address cannot use the removed admin's invitation.
    const stranger = await registerAndAccept(sleeper, link);
    expect([stranger.landing, stranger.status]).toEqual([404, 404]);
    expect((await stranger.jar.fetch(`${srv.url}/settings/project?project=${project.slug}`)).status).toBe(404);

    const audit = await (await jar.fetch(`${srv.url}/settings/project?project=${project.slug}`)).text();
    expect(audit).toMatch(/key\.revoke[\s\S]*removed agent/);
    expect(audit).toMatch(/invitation\.revoke[\s\S]*sleeper-removed/);
    expect((await jar.fetch(`${srv.url}/settings/api-keys`)).status).toBe(200);
    expect(await (await jar.fetch(`${srv.url}/settings/api-keys`)).text()).not.toContain("removed agent");

    await setMember(srv.ports.sql, project.id, adm.email, "admin", owner.id);
    expect((await send(key, "GET", "/api/runs")).status).toBe(401);
  });

  it("a deleted project's keys are refused at once", async () => {
    const owner = await srv.user(`owner-deleted-${tag}@example.com`);
    const project = await createProject(srv.ports.sql, owner.id, `Deleted ${tag}`);
    const key = await srv.key(owner.id, { projectId: project.id });
    expect((await send(key, "GET", "/api/runs")).status).toBe(200);
    expect((await fetch(`${srv.url}/api/ingest`, json(key, { event_type: "run_start", sdk_run_id: "gone-1", agent_name: "bot", payload: {} }))).status).toBe(202);
    const { post } = await ownerPage(owner.email, project.slug);
    expect((await post("delete", { confirm: project.slug })).status).toBe(303);
    const started = Date.now();
    expect((await send(key, "GET", "/api/runs")).status).toBe(401);
    expect((await fetch(`${srv.url}/api/ingest`, json(key, { event_type: "run_start", sdk_run_id: "gone-2", agent_name: "bot", payload: {} }))).status).toBe(401);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("a key whose creator is promoted may do more at once", async () => {
    const owner = await srv.user(`owner-promoted-${tag}@example.com`);
    const member = await srv.user(`member-promoted-${tag}@example.com`);
    const project = await createProject(srv.ports.sql, owner.id, `Promoted ${tag}`);
    await setMember(srv.ports.sql, project.id, member.email, "member", owner.id);
    const key = await srv.key(member.id, { projectId: project.id });
    expect((await send(key, "PUT", "/api/evaluation-settings", { daily_budget_usd: 1 })).status).toBe(403);
    const { post } = await ownerPage(owner.email, project.slug);
    expect((await post("members", { email: member.email, role: "admin" })).status).toBe(302);
    expect((await send(key, "DELETE", "/api/provider-keys/openai")).status).toBe(404); // allowed: there is none to delete
  });
});

describe("invitations of an admin who may no longer invite", () => {
  it("are refused to whoever registers the invited address, even if the sender's removal did not revoke them", async () => {
    const { owner, adm, project, sleeper, link } = await teamWithAdmin("direct");
    // A removal made before removals revoked invitations: the membership row alone is gone.
    await srv.ports.sql.query("DELETE FROM project_members WHERE project_id = $1 AND user_id = $2", [project.id, adm.id]);
    const stranger = await registerAndAccept(sleeper, link);
    expect([stranger.landing, stranger.status]).toEqual([404, 404]);
    expect(await srv.ports.sql.query("SELECT role FROM project_members WHERE project_id = $1 AND user_id <> $2", [project.id, owner.id])).toEqual([]);
  });
});

describe("invitations of an admin who may still invite", () => {
  it("are accepted as before", async () => {
    const { project, sleeper, link } = await teamWithAdmin("valid");
    const invited = await registerAndAccept(sleeper, link);
    expect([invited.landing, invited.status]).toEqual([200, 302]);
    expect(await srv.ports.sql.query("SELECT m.role FROM project_members m JOIN users u ON u.id = m.user_id WHERE m.project_id = $1 AND u.email = $2", [project.id, sleeper])).toEqual([{ role: "admin" }]);
  });
});

describe("bearer keys of other members", () => {
  it("an owner's key keeps working while a member is removed", async () => {
    const { owner, adm, project } = await teamWithAdmin("bystander");
    const ownerKey = await srv.key(owner.id, { projectId: project.id });
    expect((await fetch(`${srv.url}/api/runs`, bearer(ownerKey))).status).toBe(200);
    const { post } = await ownerPage(owner.email, project.slug);
    expect((await post("members/remove", { email: adm.email })).status).toBe(302);
    expect((await fetch(`${srv.url}/api/runs`, bearer(ownerKey))).status).toBe(200);
  });
});

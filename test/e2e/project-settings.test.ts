/**
 * /settings/project and invitations over real HTTP, as a team uses them (docs/TEAMS.md): an admin invites by e-mail,
 * the link is shown to copy (no SMTP here), a newcomer registers through it and joins with the invited role; and
 * as an attacker would: a reused, altered, revoked or expired link, another account accepting it, a viewer's posts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { currentProject } from "../../stores/accounts/current-project.js";
import { createProject } from "../../stores/accounts/projects.js";
import { CookieJar, csrfFrom, loginJar, startTestServer, type TestServer } from "./harness.js";

let srv: TestServer;
const tag = Math.random().toString(36).slice(2, 8);

beforeAll(async () => {
  srv = await startTestServer({ env: { SMTP_HOST: "" } });
});
afterAll(async () => {
  await srv?.close();
});

const linkIn = (html: string) => /\/invitations\/([0-9a-f]{64})/.exec(html)?.[1];

async function register(email: string, next: string): Promise<CookieJar> {
  const jar = new CookieJar();
  const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/register?next=${encodeURIComponent(next)}`)).text());
  const res = await jar.form(`${srv.url}/register`, { _csrf: csrf, email, name: "Bob", password: "correct horse battery", password_confirm: "correct horse battery", next });
  expect([res.status, res.headers.get("location")]).toEqual([302, next]);
  return jar;
}

describe("project settings and invitations", () => {
  it("invites a newcomer who registers through the link and joins with the role; admins manage, viewers cannot", async () => {
    const alice = await srv.user(`alice-${tag}@example.com`);
    const project = await createProject(srv.ports.sql, alice.id, `Support ${tag}`);
    const aliceJar = await loginJar(srv.url, alice.email);
    const settings = `${srv.url}/settings/project?project=${project.slug}`;
    const first = await aliceJar.fetch(settings);
    expect(first.status).toBe(200);
    const csrf = csrfFrom(await first.text());
    const invite = (email: string, role = "viewer", jar = aliceJar, token = csrf) =>
      jar.form(`${srv.url}/settings/project/${project.slug}/invitations`, { _csrf: token, email, role });

    const bobEmail = `bob-${tag}@example.com`;
    const made = await invite(bobEmail);
    expect(made.status).toBe(201);
    const token = linkIn(await made.text())!;
    expect(token).toBeDefined();
    expect((await invite("not an address")).status).toBe(422);
    expect((await invite(`x-${tag}@example.com`, "owner")).status).toBe(422);
    expect((await invite(alice.email)).status).toBe(409); // already a member

    // The link, logged out: what it is for; an altered one: not valid.
    const landing = await fetch(`${srv.url}/invitations/${token}`);
    expect(landing.status).toBe(200);
    expect(await landing.text()).toContain(`invited <strong>${bobEmail}</strong>`);
    const altered = token.slice(0, -1) + (token.endsWith("0") ? "1" : "0");
    expect((await fetch(`${srv.url}/invitations/${altered}`)).status).toBe(404);
    expect((await fetch(`${srv.url}/invitations/..%2F..%2Fadmin`)).status).toBe(404);

    // Another account cannot use Bob's link.
    const mallory = await srv.user(`mallory-${tag}@example.com`);
    const malloryJar = await loginJar(srv.url, mallory.email);
    const mCsrf = csrfFrom(await (await malloryJar.fetch(`${srv.url}/invitations/${token}`)).text());
    expect((await malloryJar.form(`${srv.url}/invitations/${token}/accept`, { _csrf: mCsrf })).status).toBe(403);
    expect((await malloryJar.fetch(settings)).status).toBe(404);

    // Bob registers through the link and accepts it: a viewer.
    const bobJar = await register(bobEmail, `/invitations/${token}`);
    const bCsrf = csrfFrom(await (await bobJar.fetch(`${srv.url}/invitations/${token}`)).text());
    const accepted = await bobJar.form(`${srv.url}/invitations/${token}/accept`, { _csrf: bCsrf });
    expect([accepted.status, accepted.headers.get("location")]).toEqual([302, `/p/${project.slug}/settings/project`]);
    const bobPage = await (await bobJar.fetch(settings)).text();
    expect(bobPage).toContain("your role: <strong>viewer</strong>");
    expect(bobPage).not.toContain("Invite someone");
    expect((await bobJar.form(`${srv.url}/invitations/${token}/accept`, { _csrf: bCsrf })).status).toBe(404); // used up
    expect((await invite(`eve-${tag}@example.com`, "admin", bobJar, bCsrf)).status).toBe(403);
    expect((await bobJar.form(`${srv.url}/settings/project/${project.slug}/members/remove`, { _csrf: bCsrf, email: alice.email })).status).toBe(403);
    expect((await bobJar.form(`${srv.url}/settings/project/${project.slug}/members`, { _csrf: bCsrf, email: bobEmail, role: "admin" })).status).toBe(403);

    // Revoked and expired links stop working.
    const revokedToken = linkIn(await (await invite(`carol-${tag}@example.com`)).text())!;
    const [{ id }] = await srv.ports.sql.query<{ id: number }>("SELECT id FROM project_invitations WHERE email = $1", [`carol-${tag}@example.com`]);
    expect((await aliceJar.form(`${srv.url}/settings/project/${project.slug}/invitations/${id}/revoke`, { _csrf: csrf })).status).toBe(302);
    expect((await fetch(`${srv.url}/invitations/${revokedToken}`)).status).toBe(404);
    const oldToken = linkIn(await (await invite(`dave-${tag}@example.com`)).text())!;
    await srv.ports.sql.query("UPDATE project_invitations SET expires_at = now() - interval '1 second' WHERE email = $1", [`dave-${tag}@example.com`]);
    expect((await fetch(`${srv.url}/invitations/${oldToken}`)).status).toBe(404);

    // The admin changes Bob's role, then removes him: his next request has lost the project.
    expect((await aliceJar.form(`${srv.url}/settings/project/${project.slug}/members`, { _csrf: csrf, email: bobEmail, role: "member" })).status).toBe(302);
    expect(await (await bobJar.fetch(settings)).text()).toContain("your role: <strong>member</strong>");
    expect((await aliceJar.form(`${srv.url}/settings/project/${project.slug}/members/remove`, { _csrf: csrf, email: alice.email })).status).toBe(409);
    expect((await aliceJar.form(`${srv.url}/settings/project/${project.slug}/members/remove`, { _csrf: csrf, email: bobEmail })).status).toBe(302);
    expect((await bobJar.fetch(settings)).status).toBe(404);
    expect((await aliceJar.form(`${srv.url}/settings/project/${project.slug}/members`, { _csrf: "forged", email: bobEmail, role: "admin" })).status).toBe(403);

    const log = await (await aliceJar.fetch(settings)).text();
    for (const action of ["invitation.create", "invitation.accept", "invitation.revoke", "member.role", "member.remove"]) expect(log).toContain(action);
  }, 60_000);

  it("comes back to the project whose page the member opened, not the one a script of another tab read from", async () => {
    const carol = await srv.user(`carol-${tag}@example.com`);
    const personal = (await currentProject(srv.ports.sql, carol.id))!.current;
    const team = await createProject(srv.ports.sql, carol.id, `Team ${tag}`);
    const jar = await loginJar(srv.url, carol.email);
    const landing = async () => new URL((await jar.fetch(`${srv.url}/dashboard`)).url).pathname;
    expect((await jar.fetch(`${srv.url}/p/${team.slug}/dashboard`)).status).toBe(200);
    expect(await landing()).toBe(`/p/${team.slug}/dashboard`);
    // A page of the personal project left open in another tab reads from its project: not a choice of the member's.
    expect((await jar.fetch(`${srv.url}/p/${personal.slug}/dashboard`, { headers: { "Sec-Fetch-Dest": "empty" } })).status).toBe(200);
    expect(await landing()).toBe(`/p/${team.slug}/dashboard`);
    expect((await jar.fetch(`${srv.url}/p/${personal.slug}/dashboard`, { headers: { "Sec-Fetch-Dest": "document" } })).status).toBe(200);
    expect(await landing()).toBe(`/p/${personal.slug}/dashboard`);
  });
});

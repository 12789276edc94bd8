/**
 * RUNWATCH_REGISTRATION=invite over real HTTP (docs/TEAMS.md): a new account only through an open invitation's
 * link, with the invited address; every other way to /register is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject } from "../../stores/accounts/projects.js";
import { CookieJar, csrfFrom, loginJar, startTestServer, type TestServer } from "./harness.js";

const tag = Math.random().toString(36).slice(2, 8);
const linkIn = (html: string) => /\/invitations\/([0-9a-f]{64})/.exec(html)?.[1];

describe("registration by invitation only (RUNWATCH_REGISTRATION=invite)", () => {
  let closed: TestServer;
  beforeAll(async () => {
    closed = await startTestServer({ env: { RUNWATCH_REGISTRATION: "invite", SMTP_HOST: "" } });
  });
  afterAll(async () => {
    await closed?.close();
  });

  it("takes a new account only through an open invitation's link, for the invited address", async () => {
    const owner = await closed.user(`owner-${tag}@example.com`);
    const project = await createProject(closed.ports.sql, owner.id, "Closed shop");
    const ownerJar = await loginJar(closed.url, owner.email);
    const csrf = csrfFrom(await (await ownerJar.fetch(`${closed.url}/settings/project?project=${project.slug}`)).text());
    const made = await ownerJar.form(`${closed.url}/settings/project/${project.slug}/invitations`, { _csrf: csrf, email: `new-${tag}@example.com`, role: "member" });
    const next = `/invitations/${linkIn(await made.text())}`;

    expect((await fetch(`${closed.url}/register`)).status).toBe(403);
    expect((await fetch(`${closed.url}/register?next=${encodeURIComponent(`/invitations/${"0".repeat(64)}`)}`)).status).toBe(403);
    const jar = new CookieJar();
    const form = await jar.fetch(`${closed.url}/register?next=${encodeURIComponent(next)}`);
    expect(form.status).toBe(200);
    const html = await form.text();
    expect(html).toContain(`value="new-${tag}@example.com"`);
    const token = csrfFrom(html);
    const fields = { _csrf: token, name: "New", password: "correct horse battery", password_confirm: "correct horse battery" };
    expect((await jar.form(`${closed.url}/register`, { ...fields, email: `new-${tag}@example.com` })).status).toBe(403); // no invitation named
    expect((await jar.form(`${closed.url}/register`, { ...fields, email: `other-${tag}@example.com`, next })).status).toBe(422);
    const ok = await jar.form(`${closed.url}/register`, { ...fields, email: `new-${tag}@example.com`, next });
    expect([ok.status, ok.headers.get("location")]).toEqual([302, next]);
    const accept = await jar.form(`${closed.url}${next}/accept`, { _csrf: csrfFrom(await (await jar.fetch(`${closed.url}${next}`)).text()) });
    expect(accept.status).toBe(302);
    expect(await (await jar.fetch(`${closed.url}/settings/project?project=${project.slug}`)).text()).toContain("your role: <strong>member</strong>");
  }, 60_000);
});

/**
 * The prompts pages (docs/PROMPTS.md) over real HTTP with a real session: a member creates a prompt from the form,
 * saves a new version from the prefilled form, compares two versions, moves a label and rolls it back; a bad form is
 * shown again with the field named; a viewer sees the prompts without a form and may not post them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, setMember } from "../../stores/accounts/projects.js";
import { switchProject } from "../../stores/accounts/current-project.js";
import { csrfFrom, loginJar, startTestServer, type CookieJar, type TestServer } from "./harness.js";

let srv: TestServer;
let team: { id: number; slug: string };
let memberJar: CookieJar;
let viewerJar: CookieJar;
let memberKey: string;

const page = async (jar: CookieJar, path: string) => {
  const res = await jar.fetch(`${srv.url}/p/${team.slug}${path}`);
  return { status: res.status, html: await res.text() };
};
const api = (path: string) => fetch(`${srv.url}${path}`, { headers: { authorization: `Bearer ${memberKey}` } }).then((r) => r.json());

beforeAll(async () => {
  srv = await startTestServer();
  const owner = await srv.user();
  team = await createProject(srv.ports.sql, owner.id, "Prompt pages");
  const member = await srv.user();
  await setMember(srv.ports.sql, team.id, member.email, "member", owner.id);
  const viewer = await srv.user();
  await setMember(srv.ports.sql, team.id, viewer.email, "viewer", owner.id);
  for (const u of [member, viewer]) await switchProject(srv.ports.sql, u.id, team.slug);
  memberKey = await srv.key(member.id, { projectId: team.id });
  memberJar = await loginJar(srv.url, member.email);
  viewerJar = await loginJar(srv.url, viewer.email);
});
afterAll(async () => {
  await srv?.close();
});

describe("the prompts pages", () => {
  it("creates a prompt, saves a version, compares them and moves a label back and forth", async () => {
    const list = await page(memberJar, "/prompts");
    expect(list.status).toBe(200);
    expect(list.html).toContain('id="new-prompt"');
    const csrf = csrfFrom(list.html);
    const fields = { _csrf: csrf, name: "triage", format: "text", prompt: "Classify {{ticket}} as bug or question.", provider: "openai", model: "gpt-4o-mini", parameters: '{"temperature": 0}', tools: "", response_format: "", message: "first", labels: "production" };
    const created = await memberJar.form(`${srv.url}/p/${team.slug}/prompts`, fields);
    expect(created.status).toBe(303);
    expect(new URL(created.headers.get("location")!, srv.url).pathname).toBe(`/p/${team.slug}/prompts/triage`);

    const bad = await memberJar.form(`${srv.url}/p/${team.slug}/prompts`, { ...fields, name: "other", parameters: "{nope" });
    expect(bad.status).toBe(422);
    const badHtml = await bad.text();
    expect(badHtml).toContain("parameters must be JSON");
    expect(badHtml).toContain("Classify {{ticket}} as bug or question.</textarea>");
    const taken = await memberJar.form(`${srv.url}/p/${team.slug}/prompts`, fields);
    expect(taken.status).toBe(422);
    const chatBad = await memberJar.form(`${srv.url}/p/${team.slug}/prompts`, { ...fields, name: "chatty", format: "chat", prompt: '[{"role": "wizard", "content": "x"}]' });
    expect(chatBad.status).toBe(422);

    const shown = await page(memberJar, "/prompts/triage");
    expect(shown.status).toBe(200);
    expect(shown.html).toContain("<code>ticket</code>");
    expect(shown.html).toContain('id="new-version"');
    expect(shown.html).toContain('id="move-label"');
    // The new-version form holds the version shown, to change.
    expect(shown.html).toContain("Classify {{ticket}} as bug or question.</textarea>");
    const v2 = await memberJar.form(`${srv.url}/p/${team.slug}/prompts/triage/versions`, { ...fields, name: "", prompt: "Classify {{ticket}} as bug, question or praise.", model: "gpt-4o", message: "praise too", labels: "" });
    expect(v2.status).toBe(303);
    expect((await api("/api/prompts/triage")).prompt).toMatchObject({ version: 2, message: "praise too", config: { model: "gpt-4o", provider: "openai", parameters: { temperature: 0 } } });

    const compared = await page(memberJar, "/prompts/triage?from=1&to=2");
    expect(compared.html).toContain('<span class="del">- Classify {{ticket}} as bug or question.</span>');
    expect(compared.html).toContain('<span class="add">+ Classify {{ticket}} as bug, question or praise.</span>');
    expect(compared.html).toMatch(/id="config-diff"[\s\S]*gpt-4o-mini/);

    const moved = await memberJar.form(`${srv.url}/p/${team.slug}/prompts/triage/labels`, { _csrf: csrf, label: "production", version: "2" });
    expect(moved.status).toBe(303);
    expect((await api("/api/prompts/triage?label=production")).prompt.version).toBe(2);
    const back = await memberJar.form(`${srv.url}/p/${team.slug}/prompts/triage/labels`, { _csrf: csrf, label: "production", version: "1" });
    expect(decodeURIComponent(back.headers.get("location")!)).toContain("production moved v2 → v1");
    expect((await api("/api/prompts/triage?label=production")).prompt.version).toBe(1);
    const badLabel = await memberJar.form(`${srv.url}/p/${team.slug}/prompts/triage/labels`, { _csrf: csrf, label: "latest", version: "1" });
    expect(badLabel.status).toBe(422);
    expect(await badLabel.text()).toContain("not &quot;latest&quot;");
    expect((await page(memberJar, "/prompts/nope")).status).toBe(404);
  });

  it("shows a viewer the prompts without a form, and refuses the viewer's posts", async () => {
    const list = await page(viewerJar, "/prompts");
    expect(list.html).toContain("triage");
    expect(list.html).not.toContain('id="new-prompt"');
    const one = await page(viewerJar, "/prompts/triage");
    expect(one.status).toBe(200);
    expect(one.html).toContain('id="labels"');
    expect(one.html).not.toContain('id="move-label"');
    expect(one.html).not.toContain('id="new-version"');
    const csrf = csrfFrom(one.html);
    expect((await viewerJar.form(`${srv.url}/p/${team.slug}/prompts/triage/labels`, { _csrf: csrf, label: "production", version: "2" })).status).toBe(403);
    expect((await viewerJar.form(`${srv.url}/p/${team.slug}/prompts/triage/versions`, { _csrf: csrf, format: "text", prompt: "x" })).status).toBe(403);
  });
});

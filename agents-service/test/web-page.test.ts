/**
 * The dashboard's /improve page end to end: a logged-in user in a real web app (embedded ports) submits the
 * CSRF-protected form; web calls agents-service (real HTTP, secret server-side) which calls a fake provider.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CookieJar, csrfFrom, startTestServer, type TestServer } from "../../test/e2e/harness.js";
import { PY_CODE, SECRET, startHarness, type Harness } from "./harness.js";

let agents: Harness;
let web: TestServer;
beforeAll(async () => {
  agents = await startHarness({}, { GEMINI_API_KEY: "" });
  web = await startTestServer({ env: { RUNWATCH_AGENTS_URL: agents.url, AGENT_SECRET: SECRET } });
}, 120_000);
afterAll(async () => {
  await web?.close();
  await agents?.close();
});

async function loggedIn(): Promise<{ jar: CookieJar; userId: number }> {
  const email = `improve-${Date.now()}-${Math.random().toString(36).slice(2, 7)}@example.com`;
  const user = await web.user(email);
  const jar = new CookieJar();
  const csrf = csrfFrom(await (await jar.fetch(`${web.url}/login`)).text());
  const res = await jar.form(`${web.url}/login`, { _csrf: csrf, email, password: "correct horse battery" });
  expect(res.status).toBe(302);
  return { jar, userId: user.id };
}

describe("/improve page", () => {
  it("needs a logged-in user", async () => {
    const res = await fetch(`${web.url}/improve`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/login?next=%2Fimprove");
  });

  it("shows the form with the configured providers; unconfigured ones are disabled", async () => {
    const { jar } = await loggedIn();
    const res = await jar.fetch(`${web.url}/improve`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('name="_csrf"');
    expect(html).toMatch(/<option value="openai" data-default-model="gpt-4.1-mini" selected>OpenAI<\/option>/);
    expect(html).toMatch(/<option value="gemini"[^>]* disabled>Google Gemini \(not configured\)/);
    expect(html).toContain('value="gpt-4.1-mini"');
  });

  it("rejects a POST without the CSRF token", async () => {
    const { jar } = await loggedIn();
    const res = await jar.form(`${web.url}/improve`, { code: PY_CODE });
    expect(res.status).toBe(403);
  });

  it("shows the detected language, suggestions and the diff; the secret never reaches the browser", async () => {
    const { jar } = await loggedIn();
    const csrf = csrfFrom(await (await jar.fetch(`${web.url}/improve`)).text());
    const before = agents.fake.requests.length;
    const res = await jar.form(`${web.url}/improve`, { _csrf: csrf, code: PY_CODE, provider: "anthropic", model: "", temperature: "0.2" });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(agents.fake.requests.length).toBe(before + 1);
    expect(agents.fake.requests.at(-1)!.body.temperature).toBe(0.2);
    expect(html).toMatch(/id="detected-language">Python<\/strong>\s*\(\d+% confidence\)/);
    expect(html).toContain("Compare with None using `is`");
    expect(html).toContain('<div class="del">-        if item.get(key) == None:</div>');
    expect(html).toContain('<div class="add">+        if item.get(key) is None:</div>');
    expect(html).toContain("claude-sonnet-4-5");
    expect(html).toContain("$0.0081");
    expect(html).not.toContain(SECRET);
  });

  it("saves provider, model and temperature as the user's defaults and uses them next time", async () => {
    const { jar, userId } = await loggedIn();
    const csrf = csrfFrom(await (await jar.fetch(`${web.url}/improve`)).text());
    const res = await jar.form(`${web.url}/improve`, { _csrf: csrf, code: PY_CODE, provider: "anthropic", model: "claude-haiku-4-5", temperature: "0.4", save_defaults: "on" });
    expect(res.status).toBe(200);
    const rows = await web.ports.sql.query<Record<string, unknown>>("SELECT provider, model, temperature FROM project_settings WHERE project_id = $1", [userId]);
    expect(rows[0]).toMatchObject({ provider: "anthropic", model: "claude-haiku-4-5", temperature: 0.4 });
    const page = await (await jar.fetch(`${web.url}/improve`)).text();
    expect(page).toMatch(/<option value="anthropic" data-default-model="claude-sonnet-4-5" selected>/);
    expect(page).toContain('value="claude-haiku-4-5"');
    expect(page).toContain('value="0.4"');
  });

  it("shows the agents service's error next to the field", async () => {
    const { jar } = await loggedIn();
    const csrf = csrfFrom(await (await jar.fetch(`${web.url}/improve`)).text());
    const res = await jar.form(`${web.url}/improve`, { _csrf: csrf, code: PY_CODE, provider: "anthropic", temperature: "1.5" });
    expect(res.status).toBe(422);
    const html = await res.text();
    expect(html).toContain('<p class="field-error">temperature: must be between 0 and 1 for anthropic</p>');
    expect(html).toContain(PY_CODE.split("\n")[0]); // the typed code is kept
  });

  it("a provider failure is shown, not a crash", async () => {
    const { jar } = await loggedIn();
    const csrf = csrfFrom(await (await jar.fetch(`${web.url}/improve`)).text());
    agents.fake.script("openai", { kind: "answer", answer: { nope: true } });
    const res = await jar.form(`${web.url}/improve`, { _csrf: csrf, code: PY_CODE, provider: "openai" });
    expect(res.status).toBe(502);
    expect(await res.text()).toContain("malformed model answer");
  });
});

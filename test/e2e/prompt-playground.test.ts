/**
 * The prompts playground's API over real HTTP (docs/PROMPTS.md, Playground): agents-service in front of a fake that
 * speaks OpenAI's and Anthropic's real HTTP APIs on loopback. A member runs a version (by number or label) or a
 * draft with its variables filled: the rendered messages reach the provider the version's config names, and the
 * answer comes back with tokens, cost and latency. Bad input — a missing variable, an unknown version, a provider
 * that refuses the model or does not answer in time — is a 422 naming the field. A viewer may not run it; a project
 * without its own key may not spend the operator's unless the operator allows it, and with its own key spends its
 * own; every run counts against the project's judge caps.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, setMember } from "../../stores/accounts/projects.js";
import { switchProject } from "../../stores/accounts/current-project.js";
import { startFakeProviders, type FakeProviders } from "../../agents-service/test/fake-providers.js";
import { KEYS, SECRET, startHarness, type Harness } from "../../agents-service/test/harness.js";
import { csrfFrom, json, loginJar, startTestServer, type TestAccount, type TestServer } from "./harness.js";

process.env.RUNWATCH_ALLOW_PRIVATE_PROVIDER_URLS = "1";

const OWN_KEY = "sk-playground-own-0123456789";
const ADMIN_EMAIL = `playground-admin-${Date.now()}@example.com`;
let agents: Harness;
let theirs: FakeProviders;
let srv: TestServer;
let admin: { id: number; key: string };
let viewerKey: string;
let viewerEmail: string;
let stranger: TestAccount;

beforeAll(async () => {
  agents = await startHarness({ allowPrivateProviderUrls: true, llmMaxRetries: 0, llmTimeoutMs: 1_000 });
  theirs = await startFakeProviders({ openai: OWN_KEY, anthropic: undefined, gemini: undefined });
  srv = await startTestServer({
    env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000", RUNWATCH_AGENTS_URL: agents.url, AGENT_SECRET: SECRET, RUNWATCH_ADMIN_EMAILS: ADMIN_EMAIL },
  });
  const adminUser = await srv.user(ADMIN_EMAIL);
  admin = { id: adminUser.id, key: await srv.key(adminUser.id) };
  const viewer = await srv.user();
  await setMember(srv.ports.sql, admin.id, viewer.email, "viewer", admin.id);
  viewerKey = await srv.key(viewer.id, { projectId: admin.id });
  viewerEmail = viewer.email;
  stranger = await srv.account();
  for (const key of [admin.key, stranger.key]) {
    expect((await post("/api/prompts/support/versions", {
      prompt: [{ role: "system", content: "You answer for {{company}}." }, { role: "user", content: "{{question}}" }],
      config: { provider: "openai", model: "gpt-4o-mini", parameters: { temperature: 0.3, max_tokens: 200 } }, message: "first",
    }, key)).status).toBe(201);
    expect((await post("/api/prompts/support/versions", {
      prompt: "Answer briefly for {{company}}: {{question}}", config: { provider: "anthropic", model: "claude-haiku-4-5" }, message: "text", labels: ["staging"],
    }, key)).status).toBe(201);
  }
}, 60_000);
afterAll(async () => {
  delete process.env.RUNWATCH_ALLOW_PRIVATE_PROVIDER_URLS;
  await srv?.close();
  await theirs?.close();
  await agents?.close();
});

async function post(path: string, body: unknown, key: string) {
  const res = await fetch(`${srv.url}${path}`, json(key, body));
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}
const run = (body: unknown, key = admin.key, name = "support") => post(`/api/prompts/${name}/playground`, body, key);
const variables = { company: "Acme", question: "Where is my parcel?" };

describe("the prompts playground's API", () => {
  it("runs a chat version on OpenAI and a text version on Anthropic, with the rendered messages, answer, tokens, cost and latency", async () => {
    agents.fake.chat = (provider, body) => `${provider} heard ${JSON.stringify(body.messages.at(-1).content)}`;
    const before = agents.fake.requests.length;
    const a = await run({ version: 1, variables });
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(a.body.run).toMatchObject({
      version: 1, provider: "openai", model: "gpt-4o-mini", answer: 'openai heard "Where is my parcel?"',
      messages: [{ role: "system", content: "You answer for Acme." }, { role: "user", content: "Where is my parcel?" }], attempts: 1,
    });
    expect(a.body.run.prompt_tokens).toBeGreaterThan(0);
    expect(a.body.run.completion_tokens).toBeGreaterThan(0);
    expect(a.body.run.cost_usd).toBeGreaterThan(0);
    expect(a.body.run.latency_ms).toBeGreaterThanOrEqual(0);
    const sentA = agents.fake.requests[before]!;
    expect([sentA.provider, sentA.headers.authorization, sentA.body.temperature, sentA.body.max_completion_tokens]).toEqual(["openai", `Bearer ${KEYS.openai}`, 0.3, 200]);

    const b = await run({ label: "staging", variables });
    expect(b.status, JSON.stringify(b.body)).toBe(200);
    expect(b.body.run).toMatchObject({ version: 2, provider: "anthropic", answer: 'anthropic heard "Answer briefly for Acme: Where is my parcel?"' });
    const sentB = agents.fake.requests.at(-1)!;
    expect([sentB.provider, sentB.headers["x-api-key"], sentB.body.max_tokens]).toEqual(["anthropic", KEYS.anthropic, 2048]);

    // A draft: the page's edited messages, run as they are.
    const d = await run({ prompt: [{ role: "user", content: "Hi {{name}}" }], config: { provider: "openai", model: "gpt-4.1-mini" }, variables: { name: "Ann" } });
    expect(d.body.run).toMatchObject({ version: null, model: "gpt-4.1-mini", answer: 'openai heard "Hi Ann"' });
  });

  it("answers bad input with a 422 naming the field", async () => {
    const missing = await run({ version: 1, variables: { company: "Acme" } });
    expect([missing.status, missing.body.error.field]).toEqual([422, "variables.question"]);
    expect(missing.body.error.message).toContain("question");
    const unknown = await run({ version: 9, variables });
    expect([unknown.status, unknown.body.error.field]).toEqual([422, "version"]);
    expect((await run({ label: "nope", variables })).body.error.field).toBe("label");
    expect((await run({ version: 1 }, admin.key, "no-such-prompt")).status).toBe(404);
    expect((await run({ version: "1" })).body.error.field).toBe("version");
    expect((await run({ version: 1, variables: "x" })).body.error.field).toBe("variables");
    expect((await run({ version: 1, temperature: 2 })).body.error.field).toBe("temperature");
    expect((await run({ prompt: "Hi", config: { provider: "mistral" } })).body.error.field).toBe("config.provider");
    expect((await run({ prompt: "Hi", config: { parameters: { temperature: 9 } } })).body.error.field).toBe("config.parameters.temperature");
    expect((await run({ prompt: [{ role: "tool", content: "42" }] })).body.error.field).toBe("prompt.0.role");

    agents.fake.script("openai", { kind: "status", status: 404 });
    const rejected = await run({ version: 1, variables });
    expect([rejected.status, rejected.body.error.code, rejected.body.error.field]).toEqual([422, "provider_rejected_request", "config.model"]);
    expect(rejected.body.error.message).toContain("OpenAI answered HTTP 404");

    agents.fake.script("anthropic", { kind: "delay", ms: 1_500 });
    const slow = await run({ version: 2, variables });
    expect([slow.status, slow.body.error.code, slow.body.error.field]).toEqual([422, "provider_timeout", "config.model"]);
  });

  it("is for members and above; a project spends the operator's key only when allowed, else its own; runs count against its caps", async () => {
    const before = agents.fake.requests.length;
    expect((await run({ version: 1, variables }, viewerKey)).status).toBe(403);
    // The page: a viewer reads the versions side by side, with no run or save, and may not post them.
    const [project] = await srv.ports.sql.query<{ slug: string }>("SELECT slug FROM projects WHERE id = $1", [admin.id]);
    await switchProject(srv.ports.sql, (await srv.ports.sql.query<{ id: number }>("SELECT id FROM users WHERE email = $1", [viewerEmail]))[0]!.id, project!.slug);
    const jar = await loginJar(srv.url, viewerEmail);
    const pageRes = await jar.fetch(`${srv.url}/p/${project!.slug}/prompts/support/playground?a=1&b=2`);
    const html = await pageRes.text();
    expect(pageRes.status).toBe(200);
    expect(html).toContain('id="side-b"');
    expect(html).toContain('id="read-only"');
    expect(html).not.toContain('id="run"');
    expect(html).not.toContain("save-side");
    const form = { _csrf: csrfFrom(html), a_version: "1", a_format: "text", a_prompt: "Hi", "var:company": "Acme" };
    expect((await jar.form(`${srv.url}/p/${project!.slug}/prompts/support/playground`, form)).status).toBe(403);
    expect((await jar.form(`${srv.url}/p/${project!.slug}/prompts/support/playground/save?side=a`, form)).status).toBe(403);
    const refused = await run({ version: 1, variables }, stranger.key);
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain("RUNWATCH_OPERATOR_JUDGE_KEY");
    expect(agents.fake.requests.length).toBe(before);

    const own = await fetch(`${srv.url}/api/provider-keys/openai`, { ...json(stranger.key, { api_key: OWN_KEY, base_url: `${theirs.url}/openai/v1` }), method: "PUT" });
    expect(own.status).toBe(200);
    theirs.chat = () => "from the team's own server";
    const paid = await run({ version: 1, variables }, stranger.key);
    expect([paid.status, paid.body.run?.answer]).toEqual([200, "from the team's own server"]);
    expect(theirs.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${OWN_KEY}`]);
    expect(agents.fake.requests.length).toBe(before);

    // The caps: the runs' cost is the project's spend, and its calls per minute bound the playground too.
    const settings = async (key: string) => (await (await fetch(`${srv.url}/api/evaluation-settings`, { headers: { authorization: `Bearer ${key}` } })).json()) as any;
    expect((await settings(admin.key)).spent_today_usd).toBeGreaterThan(0);
    const team = await createProject(srv.ports.sql, admin.id, "Playground rate team");
    const teamKey = await srv.key(admin.id, { projectId: team.id });
    expect((await post("/api/prompts/p/versions", { prompt: "Say {{x}}", config: { provider: "openai" } }, teamKey)).status).toBe(201);
    expect((await fetch(`${srv.url}/api/evaluation-settings`, { ...json(teamKey, { calls_per_minute: 1 }), method: "PUT" })).status).toBe(200);
    expect((await run({ variables: { x: "one" } }, teamKey, "p")).status).toBe(200);
    const limited = await run({ variables: { x: "two" } }, teamKey, "p");
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBeTruthy();
  });
});

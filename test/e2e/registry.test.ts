/**
 * Agent registry, costs and settings over real HTTP (web + pipeline + chDB + PGlite):
 * - two config versions → the diff shows the change; activating v1 makes GET /api/agents/{name}/config return
 *   v1, 304 on a matching ETag; concurrent activations leave exactly one active (PGlite here, and a Postgres
 *   server when DATABASE_URL is set);
 * - a run_end with tokens + model and no cost gets the price table's cost; /costs and /costs.csv totals equal
 *   the sum of the runs' costs;
 * - /settings validates and stores provider, model, temperature.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, CookieJar, csrfFrom, json, startTestServer, waitForRun, type TestServer } from "./harness.js";
import type { SessionUser } from "../../web/deps.js";
import type { Sql } from "../../core/ports/sql.js";
import { activateVersion, addVersion, createAgent } from "../../stores/agent-registry.js";
import { computeCost } from "../../plugins/prices.js";

let srv: TestServer;
let key: string;
let user: SessionUser;
let csrf: string;
const jar = new CookieJar();

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true });
  user = await srv.user();
  key = await srv.key(user.id);
  csrf = csrfFrom(await (await jar.fetch(`${srv.url}/login`)).text());
  await jar.form(`${srv.url}/login`, { _csrf: csrf, email: user.email, password: "correct horse battery" });
  csrf = csrfFrom(await (await jar.fetch(`${srv.url}/agents`)).text());
});
afterAll(() => srv?.close());

const form = (path: string, fields: Record<string, string>) => jar.form(`${srv.url}${path}`, { _csrf: csrf, ...fields });
const sdkConfig = (name: string, headers: Record<string, string> = {}) =>
  fetch(`${srv.url}/api/agents/${encodeURIComponent(name)}/config`, { headers: { authorization: `Bearer ${key}`, ...headers } });

describe("agent registry and config versions", () => {
  const name = "support bot";

  it("creates an agent by hand; a duplicate name is a 409 on the form", async () => {
    const res = await form("/agents", { name, framework: "langgraph", tags: "prod, support, prod", budget_usd: "25", description: "answers tickets" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/agents/${encodeURIComponent(name)}?created=1`);
    const again = await form("/agents", { name });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain("already exists");
    const bad = await form("/agents", { name: "x", budget_usd: "-3" });
    expect(bad.status).toBe(422);
    const list = await (await jar.fetch(`${srv.url}/agents`)).text();
    expect(list).toContain(name);
  });

  it("two versions → the diff shows the change; activating v1 switches the SDK endpoint; ETag → 304", async () => {
    expect((await sdkConfig(name)).status).toBe(404); // no active version yet
    const invalid = await form(`/agents/${encodeURIComponent(name)}/configs`, { config: "{model: gpt}", changelog: "broken" });
    expect(invalid.status).toBe(422);
    expect(await invalid.text()).toContain("not valid JSON");
    expect((await form(`/agents/${encodeURIComponent(name)}/configs`, { config: "[1,2]" })).status).toBe(422);

    const v1 = await form(`/agents/${encodeURIComponent(name)}/configs`, { config: '{"model": "gpt-4o", "temperature": 0.2, "tools": ["search"]}', changelog: "first", activate: "on" });
    expect(v1.status).toBe(303);
    const v2 = await form(`/agents/${encodeURIComponent(name)}/configs`, { config: '{"model": "gpt-4o-mini", "temperature": 0.2, "tools": ["search"]}', changelog: "cheaper model", activate: "on" });
    expect(v2.status).toBe(303);

    const page = await (await jar.fetch(`${srv.url}/agents/${encodeURIComponent(name)}?from=1&to=2`)).text();
    const diff = /<pre class="diff" id="config-diff">([\s\S]*?)<\/pre>/.exec(page)?.[1] ?? "";
    expect(diff).toContain('<span class="del">-   &quot;model&quot;: &quot;gpt-4o&quot;,</span>');
    expect(diff).toContain('<span class="add">+   &quot;model&quot;: &quot;gpt-4o-mini&quot;,</span>');
    expect(diff).toContain('<span class="ctx">    &quot;temperature&quot;: 0.2</span>');
    expect(diff.match(/class="(add|del)"/g)).toHaveLength(2);

    const r2 = await sdkConfig(name);
    expect(r2.status).toBe(200);
    const b2 = await r2.json();
    expect(b2).toMatchObject({ agent: name, version: 2, config: { model: "gpt-4o-mini" }, changelog: "cheaper model" });
    const etag2 = r2.headers.get("etag")!;
    expect(etag2).toMatch(/^"[\w-]+"$/);
    expect((await sdkConfig(name, { "if-none-match": etag2 })).status).toBe(304);

    const rollback = await form(`/agents/${encodeURIComponent(name)}/configs/1/activate`, {});
    expect(rollback.status).toBe(303);
    const r1 = await sdkConfig(name, { "if-none-match": etag2 });
    expect(r1.status).toBe(200);
    const b1 = await r1.json();
    expect(b1).toMatchObject({ version: 1, config: { model: "gpt-4o", temperature: 0.2, tools: ["search"] }, changelog: "first" });
    const etag1 = r1.headers.get("etag")!;
    expect(etag1).not.toBe(etag2);
    expect((await sdkConfig(name, { "if-none-match": `W/${etag1}` })).status).toBe(304);
    expect((await sdkConfig(name, { "if-none-match": `"nope", ${etag1}` })).status).toBe(304);

    expect((await form(`/agents/${encodeURIComponent(name)}/configs/9/activate`, {})).status).toBe(404);
    expect((await sdkConfig("no such agent")).status).toBe(404);
    expect((await fetch(`${srv.url}/api/agents/x/config`)).status).toBe(401);
  });

  it("runs record the config version the client sends", async () => {
    await fetch(`${srv.url}/api/ingest`, json(key, { event_type: "run_start", sdk_run_id: "cv-1", agent_name: name, config_version: 1, payload: { framework: "langgraph" } }));
    const body = await waitForRun(srv.url, key, "cv-1", (b) => b.run.config_version === 1);
    expect(body.run.agent_name).toBe(name);
    const list = await (await fetch(`${srv.url}/api/runs?config_version=1`, bearer(key))).json();
    expect(list.runs.map((r: { sdk_run_id: string }) => r.sdk_run_id)).toContain("cv-1");
  });
});

async function concurrentActivations(sql: Sql, userId: number, agentName: string): Promise<void> {
  await createAgent(sql, userId, { name: agentName });
  for (let i = 0; i < 5; i++) await addVersion(sql, userId, agentName, { config: JSON.stringify({ i }) });
  await Promise.all(Array.from({ length: 40 }, (_, i) => activateVersion(sql, userId, agentName, (i % 5) + 1)));
  const rows = await sql.query<{ n: string | number }>(
    `SELECT count(*) AS n FROM agent_configs c JOIN agents a ON a.id = c.agent_id WHERE a.project_id = $1 AND a.name = $2 AND c.is_active`,
    [userId, agentName],
  );
  expect(Number(rows[0]!.n)).toBe(1);
}

describe("concurrent activations", () => {
  it("leave exactly one active version (embedded Postgres)", async () => {
    await concurrentActivations(srv.ports.sql, user.id, "race-agent");
  });

  it.skipIf(!process.env.DATABASE_URL && process.env.REQUIRE_SERVICES !== "1")("leave exactly one active version (Postgres server, DATABASE_URL)", async () => {
    if (!process.env.DATABASE_URL) throw new Error("REQUIRE_SERVICES=1 but DATABASE_URL is not set");
    const { openPg } = await import("../../core/postgres/pg.js");
    const { migratePostgres } = await import("../../core/postgres/migrate.js");
    const { createUser } = await import("../../stores/accounts/users.js");
    const sql = await openPg(process.env.DATABASE_URL);
    try {
      await migratePostgres(sql);
      const u = await createUser(sql, { email: `race-${Date.now()}-${process.pid}@example.com`, name: "Race", password: "correct horse battery" });
      await concurrentActivations(sql, u.id, "race-agent");
    } finally {
      await sql.close();
    }
  });
});

describe("costs", () => {
  const ingest = (e: Record<string, unknown>) => fetch(`${srv.url}/api/ingest`, json(key, e)).then((r) => expect(r.status).toBe(202));

  it("prices a run_end without cost from the table; /costs and the CSV total the runs' costs exactly", async () => {
    await ingest({ event_type: "run_start", sdk_run_id: "cost-1", agent_name: "pricer", payload: { framework: "x" } });
    await ingest({ event_type: "run_end", sdk_run_id: "cost-1", payload: { model: "gpt-4o-mini", prompt_tokens: 12_000, completion_tokens: 3_000, total_tokens: 15_000 } });
    await ingest({ event_type: "run_start", sdk_run_id: "cost-2", agent_name: "pricer", payload: { framework: "x" } });
    await ingest({ event_type: "run_end", sdk_run_id: "cost-2", payload: { model: "claude-3-5-sonnet", prompt_tokens: 100, completion_tokens: 10, total_tokens: 110, cost_usd: 0.5 } });
    await ingest({ event_type: "run_start", sdk_run_id: "cost-3", agent_name: "other", payload: {} });
    await ingest({ event_type: "step", sdk_run_id: "cost-3", payload: { node_name: "a", phase: "start" } }); // a second version
    await ingest({ event_type: "run_end", sdk_run_id: "cost-3", payload: { model: "gpt-4o", prompt_tokens: 1000, completion_tokens: 500, cost_usd: 0.25 } });
    await ingest({ event_type: "step", sdk_run_id: "cost-3", payload: { node_name: "late", phase: "end" } }); // a version after the end

    const r1 = (await waitForRun(srv.url, key, "cost-1", (b) => b.run.status === "success")).run;
    const expected1 = computeCost("gpt-4o-mini", 12_000, 3_000)!;
    expect(expected1).toBeGreaterThan(0);
    expect(r1.cost_source).toBe("computed");
    expect(r1.cost_usd).toBeCloseTo(expected1, 9);
    expect(r1.cost_usd).toBeCloseTo(12_000 * 0.15e-6 + 3_000 * 0.6e-6, 9);
    await waitForRun(srv.url, key, "cost-3", (b) => b.run.event_count === 4);
    await waitForRun(srv.url, key, "cost-2", (b) => b.run.status === "success");

    const runs = (await (await fetch(`${srv.url}/api/runs?limit=500`, bearer(key))).json()).runs as { cost_usd: number }[];
    const sum = runs.reduce((s, r) => s + r.cost_usd, 0);
    expect(sum).toBeCloseTo(expected1 + 0.75, 9);

    const page = await (await jar.fetch(`${srv.url}/costs?days=7`)).text();
    const shown = Number(/id="total-cost" data-usd="([^"]+)"/.exec(page)?.[1]);
    expect(shown).toBeCloseTo(sum, 9);
    expect(/id="total-runs">(\d+)</.exec(page)?.[1]).toBe(String(runs.length));
    expect(page).toMatch(/was <strong>computed<\/strong> from the price table/);
    expect(page).toContain("pricer");

    const today = new Date().toISOString().slice(0, 10);
    const csv = await jar.fetch(`${srv.url}/costs.csv?from=${today}&to=${today}`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toContain("text/csv");
    const lines = (await csv.text()).trim().split("\r\n");
    expect(lines[0]).toBe("day,agent_name,model,runs,prompt_tokens,completion_tokens,total_tokens,cost_usd,computed_cost_usd,computed_runs,client_cost_runs");
    const csvSum = lines.slice(1).reduce((s, l) => s + Number(l.split(",")[7]), 0);
    expect(csvSum).toBeCloseTo(sum, 5);
    expect(lines.slice(1).reduce((s, l) => s + Number(l.split(",")[3]), 0)).toBe(runs.length);
  });

  it("shows each budgeted agent's spend this month", async () => {
    await form("/agents/pricer", { framework: "x", tags: "", budget_usd: "0.5", description: "" });
    const page = await (await jar.fetch(`${srv.url}/costs`)).text();
    expect(page).toContain('id="budgets"');
    expect(page).toMatch(/<a href="\/p\/[a-z0-9-]+\/agents\/pricer">pricer<\/a>/);
  });
});

describe("settings", () => {
  it("validates and saves provider, model and temperature", async () => {
    const bad = await form("/settings", { provider: "openai", model: "gpt-4o", temperature: "3" });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain("Temperature must be a number from 0 to 2");
    const ok = await form("/settings", { provider: "openai", model: "gpt-4o-mini", temperature: "0.3" });
    expect(ok.status).toBe(303);
    const rows = await srv.ports.sql.query<Record<string, unknown>>("SELECT provider, model, temperature FROM project_settings WHERE project_id = $1", [user.id]);
    expect(rows[0]).toMatchObject({ provider: "openai", model: "gpt-4o-mini", temperature: 0.3 });
    const page = await (await jar.fetch(`${srv.url}/settings?saved=1`)).text();
    expect(page).toContain("Settings saved.");
    expect(page).toContain('value="gpt-4o-mini"');
  });
});

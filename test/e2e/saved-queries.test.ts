/**
 * Saved queries (docs/DASHBOARD.md, Query; docs/API.md, Saved queries): over real HTTP, the API saves, lists, reads, replaces and
 * deletes a project's queries with the answers the document names, refuses hostile input with the field named, lets
 * a viewer's key read but not write, keeps another project's queries apart (its ids are 404s) and writes each change
 * to the project's audit log; the /query page's forms save, rename and delete them for a member, and a viewer sees
 * them without the controls.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, createProject, setMember } from "../../stores/accounts/projects.js";
import { switchProject } from "../../stores/accounts/current-project.js";
import { insertSavedQuery, MAX_QUERIES_PER_PROJECT } from "../../stores/saved-queries.js";
import { csrfFrom, loginJar, startTestServer, type CookieJar, type TestServer } from "./harness.js";

let srv: TestServer;
let team: { id: number; slug: string };
let ownerKey: string;
let memberKey: string;
let viewerKey: string;
let ingestKey: string;
let strangerKey: string;
let owner: { id: number; email: string };
let member: { id: number; email: string };
let viewer: { id: number; email: string };

const send = (key: string, method: string, path: string, body?: unknown) =>
  fetch(`${srv.url}${path}`, { method, headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) }, body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) });
const names = async (key: string) => ((await (await send(key, "GET", "/api/queries")).json()).queries as { name: string }[]).map((q) => q.name);
const COST_SQL = "SELECT agent_name, sum(cost_usd) AS cost FROM runs WHERE started_at >= {since:DateTime64(3)} GROUP BY agent_name ORDER BY cost DESC";

beforeAll(async () => {
  srv = await startTestServer();
  owner = await srv.user();
  team = await createProject(srv.ports.sql, owner.id, "Query team");
  ownerKey = await srv.key(owner.id, { projectId: team.id });
  ingestKey = await srv.key(owner.id, { projectId: team.id, scope: "ingest" });
  member = await srv.user();
  await setMember(srv.ports.sql, team.id, member.email, "member", owner.id);
  memberKey = await srv.key(member.id, { projectId: team.id });
  viewer = await srv.user();
  await setMember(srv.ports.sql, team.id, viewer.email, "viewer", owner.id);
  viewerKey = await srv.key(viewer.id, { projectId: team.id });
  for (const u of [owner, member, viewer]) await switchProject(srv.ports.sql, u.id, team.slug);
  const stranger = await srv.user();
  strangerKey = await srv.key(stranger.id);
});
afterAll(async () => {
  await srv?.close();
});

describe("the saved queries API", () => {
  let id = "";

  it("saves a query with its parameters and description, and lists and reads it", async () => {
    const res = await send(ownerKey, "POST", "/api/queries", { name: "  Cost per agent ", sql: COST_SQL, params: { since: "2026-12-01 00:00:00", top: 5, on: true }, description: "Spend since a day" });
    expect(res.status).toBe(201);
    const { query } = await res.json();
    id = query.id;
    expect(query).toMatchObject({ name: "Cost per agent", sql: COST_SQL, params: { since: "2026-12-01 00:00:00", top: 5, on: true }, description: "Spend since a day", created_by: owner.id, updated_by: owner.id });
    expect(query.author).toEqual(expect.any(String));
    expect(Date.parse(query.updated_at)).toBeGreaterThan(Date.now() - 60_000);
    expect((await (await send(ownerKey, "GET", "/api/queries")).json()).queries).toEqual([query]);
    expect((await (await send(viewerKey, "GET", `/api/queries/${id}`)).json()).query).toEqual(query);
    // Without params or description: empty ones.
    const plain = await (await send(memberKey, "POST", "/api/queries", { name: "all runs", sql: "SELECT * FROM runs" })).json();
    expect(plain.query).toMatchObject({ params: {}, description: "", created_by: member.id });
  });

  it("replaces one whole, renames it and refuses a name another query has", async () => {
    const res = await send(memberKey, "PUT", `/api/queries/${id.toUpperCase()}`, { name: "Cost per agent, 7 days", sql: `${COST_SQL} LIMIT 10`, params: { since: "2026-11-29 00:00:00" } });
    expect(res.status).toBe(200);
    const { query } = await res.json();
    expect(query).toMatchObject({ id, name: "Cost per agent, 7 days", sql: `${COST_SQL} LIMIT 10`, params: { since: "2026-11-29 00:00:00" }, description: "", created_by: owner.id, updated_by: member.id });
    expect(Date.parse(query.updated_at)).toBeGreaterThanOrEqual(Date.parse(query.created_at));
    const clash = await send(ownerKey, "PUT", `/api/queries/${id}`, { name: "all runs", sql: "SELECT 1" });
    expect(clash.status).toBe(409);
    expect((await clash.json()).error).toMatchObject({ code: "query_exists", field: "name" });
    const taken = await send(ownerKey, "POST", "/api/queries", { name: "all runs", sql: "SELECT 2" });
    expect(taken.status).toBe(409);
    expect(await names(ownerKey)).toEqual(["all runs", "Cost per agent, 7 days"]);
  });

  it("refuses hostile input with the field named, and never a 500", async () => {
    const bad: [unknown, string][] = [
      [{ sql: "SELECT 1" }, "name"],
      [{ name: "", sql: "SELECT 1" }, "name"],
      [{ name: "   ", sql: "SELECT 1" }, "name"],
      [{ name: "n".repeat(101), sql: "SELECT 1" }, "name"],
      [{ name: "tab\there", sql: "SELECT 1" }, "name"],
      [{ name: "lone \ud800", sql: "SELECT 1" }, "name"],
      [{ name: 42, sql: "SELECT 1" }, "name"],
      [{ name: "x" }, "sql"],
      [{ name: "x", sql: "" }, "sql"],
      [{ name: "x", sql: " \n " }, "sql"],
      [{ name: "x", sql: "S".repeat(20_001) }, "sql"],
      [{ name: "x", sql: "SELECT '\u0007'" }, "sql"],
      [{ name: "x", sql: ["SELECT 1"] }, "sql"],
      [{ name: "x", sql: "SELECT 1", params: [] }, "params"],
      [{ name: "x", sql: "SELECT 1", params: { "1abc": "v" } }, "params"],
      [{ name: "x", sql: "SELECT 1", params: { "a b": "v" } }, "params"],
      [{ name: "x", sql: "SELECT 1", params: { a: { nested: 1 } } }, "params.a"],
      [{ name: "x", sql: "SELECT 1", params: { a: [[1]] } }, "params.a"],
      [{ name: "x", sql: "SELECT 1", params: { a: Array.from({ length: 1001 }, () => 1) } }, "params.a"],
      [{ name: "x", sql: "SELECT 1", params: { a: null } }, "params.a"],
      [{ name: "x", sql: "SELECT 1", params: { a: "v".repeat(2001) } }, "params.a"],
      [{ name: "x", sql: "SELECT 1", params: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`p${i}`, i])) }, "params"],
      [{ name: "x", sql: "SELECT 1", description: "d".repeat(1001) }, "description"],
      [{ name: "x", sql: "SELECT 1", description: "bell\u0007" }, "description"],
      [{ name: "x", sql: "SELECT 1", owner: 1 }, "owner"],
    ];
    for (const [body, field] of bad) {
      const res = await send(ownerKey, "POST", "/api/queries", body);
      const answer = await res.json();
      // Refused at the field, or at a place within it (a parameter's name, an array's item).
      const named = answer.error.field === field || answer.error.field?.startsWith(`${field}.`) ? field : answer.error.field;
      expect([JSON.stringify(body).slice(0, 60), res.status, named]).toEqual([JSON.stringify(body).slice(0, 60), 422, field]);
      const put = await send(ownerKey, "PUT", `/api/queries/${id}`, body);
      expect([JSON.stringify(body).slice(0, 60), put.status]).toEqual([JSON.stringify(body).slice(0, 60), 422]);
    }
    // U+0000 is refused before it reaches Postgres; bodies that are not one JSON object are refused as such.
    expect((await send(ownerKey, "POST", "/api/queries", { name: "x", sql: "SELECT '\u0000'" })).status).toBe(422);
    expect((await send(ownerKey, "POST", "/api/queries", "[1]")).status).toBe(422);
    expect((await send(ownerKey, "POST", "/api/queries", "{")).status).toBe(400);
    expect((await send(ownerKey, "POST", "/api/queries", "x".repeat(300_000))).status).toBe(413);
    const form = await fetch(`${srv.url}/api/queries`, { method: "POST", headers: { authorization: `Bearer ${ownerKey}`, "content-type": "text/plain" }, body: "name=x" });
    expect(form.status).toBe(415);
    expect(await names(ownerKey)).toEqual(["all runs", "Cost per agent, 7 days"]);
  });

  it("lets a viewer's key read but not write, and an ingest-only key not even read", async () => {
    expect(await names(viewerKey)).toEqual(["all runs", "Cost per agent, 7 days"]);
    for (const [method, path, body] of [["POST", "/api/queries", { name: "mine", sql: "SELECT 1" }], ["PUT", `/api/queries/${id}`, { name: "mine", sql: "SELECT 1" }], ["DELETE", `/api/queries/${id}`, undefined]] as const) {
      const res = await send(viewerKey, method, path, body);
      expect([method, res.status, (await res.json()).error.code]).toEqual([method, 403, "forbidden"]);
    }
    const res = await send(ingestKey, "GET", "/api/queries");
    expect([res.status, (await res.json()).error.code]).toEqual([403, "insufficient_scope"]);
    expect((await fetch(`${srv.url}/api/queries`)).status).toBe(401);
  });

  it("keeps another project's queries apart: its ids are 404s and its names free", async () => {
    expect(await names(strangerKey)).toEqual([]);
    for (const [method, body] of [["GET", undefined], ["PUT", { name: "stolen", sql: "SELECT 1" }], ["DELETE", undefined]] as const) {
      expect([method, (await send(strangerKey, method, `/api/queries/${id}`, body)).status]).toEqual([method, 404]);
    }
    expect((await send(strangerKey, "POST", "/api/queries", { name: "all runs", sql: "SELECT 3" })).status).toBe(201);
    expect(await names(ownerKey)).toEqual(["all runs", "Cost per agent, 7 days"]);
    expect((await (await send(ownerKey, "GET", `/api/queries/${id}`)).json()).query.name).toBe("Cost per agent, 7 days");
  });

  it("deletes a query once, and every change is in the project's audit log", async () => {
    expect((await send(memberKey, "DELETE", `/api/queries/${id}`)).status).toBe(204);
    expect((await send(memberKey, "DELETE", `/api/queries/${id}`)).status).toBe(404);
    expect((await send(memberKey, "GET", `/api/queries/${id}`)).status).toBe(404);
    for (const path of ["/api/queries/not-a-uuid", "/api/queries/00000000-0000-0000-0000-000000000000"]) {
      expect((await send(memberKey, "GET", path)).status).toBe(404);
      expect((await send(memberKey, "DELETE", path)).status).toBe(404);
    }
    const entries = (await auditLog(srv.ports.sql, team.id)).filter((e) => e.action.startsWith("saved_query.") && e.details.query_id === id);
    expect(entries.map((e) => [e.action, e.target, e.actor])).toEqual([
      ["saved_query.delete", "Cost per agent, 7 days", member.email],
      ["saved_query.update", "Cost per agent, 7 days", member.email],
      ["saved_query.create", "Cost per agent", owner.email],
    ]);
    expect(entries[1]!.details).toMatchObject({ from: "Cost per agent" });
  });

  it("caps a project's saved queries", async () => {
    const other = await createProject(srv.ports.sql, owner.id, "Many queries");
    for (let i = 0; i < MAX_QUERIES_PER_PROJECT; i++) {
      await insertSavedQuery(srv.ports.sql, other.id, owner.id, { name: `q${i}`, description: "", sql: "SELECT 1", params: {} });
    }
    const key = await srv.key(owner.id, { projectId: other.id });
    const res = await send(key, "POST", "/api/queries", { name: "one more", sql: "SELECT 1" });
    expect(res.status).toBe(422);
    expect((await res.json()).error.message).toMatch(/at most 200 saved queries/);
  });
});

describe("saved queries on the /query page", () => {
  let ownerJar: CookieJar;
  let viewerJar: CookieJar;
  let csrf = "";
  const page = async (jar: CookieJar, path: string) => {
    const res = await jar.fetch(`${srv.url}/p/${team.slug}${path}`);
    return { status: res.status, html: await res.text() };
  };
  const savedIdOf = (res: Response) => new URL(res.headers.get("location")!, srv.url).searchParams.get("saved")!;

  beforeAll(async () => {
    ownerJar = await loginJar(srv.url, owner.email);
    viewerJar = await loginJar(srv.url, viewer.email);
    csrf = csrfFrom((await page(ownerJar, "/query")).html);
  });

  it("saves the editor under a name, opens it from the list, renames it, saves over it and deletes it", async () => {
    const fields = { _csrf: csrf, sql: "SELECT agent_name, count() AS n FROM runs GROUP BY agent_name", params: JSON.stringify({ agent: "refund" }), max_rows: "50", name: "Runs per agent", description: "by name" };
    const saved = await ownerJar.form(`${srv.url}/p/${team.slug}/query/saved`, fields);
    expect(saved.status).toBe(303);
    const to = new URL(saved.headers.get("location")!, srv.url);
    expect([to.pathname, to.searchParams.get("max_rows")]).toEqual([`/p/${team.slug}/query`, "50"]);
    const id = savedIdOf(saved);
    const opened = await page(ownerJar, `/query?saved=${id}`);
    expect(opened.status).toBe(200);
    expect(opened.html).toContain("SELECT agent_name, count() AS n FROM runs GROUP BY agent_name</textarea>");
    expect(opened.html).toContain('value="refund"');
    expect(opened.html).toContain(`data-query-id="${id}"`);
    expect(opened.html).toContain('id="delete-query-form"');

    // Taken name: the page again, 409, the editor as typed and the message by the form.
    const clash = await ownerJar.form(`${srv.url}/p/${team.slug}/query/saved`, { ...fields, sql: "SELECT 42", name: "Runs per agent" });
    expect(clash.status).toBe(409);
    const clashHtml = await clash.text();
    expect(clashHtml).toContain("SELECT 42</textarea>");
    expect(clashHtml).toMatch(/id="save-error"[^>]*>a saved query named &quot;Runs per agent&quot; exists/);
    const badParams = await ownerJar.form(`${srv.url}/p/${team.slug}/query/saved`, { ...fields, name: "other", params: "{nope" });
    expect(badParams.status).toBe(422);
    expect(await badParams.text()).toContain('data-field="params"');

    const renamed = await ownerJar.form(`${srv.url}/p/${team.slug}/query/saved/${id}/rename`, { ...fields, sql: "SELECT 'not saved'", name: "Runs by agent" });
    expect(renamed.status).toBe(303);
    let api = (await (await send(ownerKey, "GET", `/api/queries/${id}`)).json()).query;
    expect([api.name, api.sql]).toEqual(["Runs by agent", fields.sql]);
    const over = await ownerJar.form(`${srv.url}/p/${team.slug}/query/saved/${id}`, { ...fields, sql: "SELECT 1 AS one", params: "{}", name: "Runs by agent", description: "" });
    expect(over.status).toBe(303);
    api = (await (await send(ownerKey, "GET", `/api/queries/${id}`)).json()).query;
    expect(api).toMatchObject({ name: "Runs by agent", sql: "SELECT 1 AS one", params: {}, description: "" });

    // A viewer sees it, without the controls, and may not post them.
    const seen = await page(viewerJar, `/query?saved=${id}`);
    expect(seen.status).toBe(200);
    expect(seen.html).toContain("SELECT 1 AS one</textarea>");
    expect(seen.html).not.toContain('id="save-tool"');
    expect(seen.html).not.toContain('id="delete-query-form"');
    const viewerCsrf = csrfFrom(seen.html);
    expect((await viewerJar.form(`${srv.url}/p/${team.slug}/query/saved/${id}/delete`, { _csrf: viewerCsrf })).status).toBe(403);
    expect((await viewerJar.form(`${srv.url}/p/${team.slug}/query/saved`, { ...fields, _csrf: viewerCsrf, name: "viewer's" })).status).toBe(403);

    const gone = await ownerJar.form(`${srv.url}/p/${team.slug}/query/saved/${id}/delete`, { _csrf: csrf });
    expect(gone.status).toBe(303);
    expect(new URL(gone.headers.get("location")!, srv.url).pathname).toBe(`/p/${team.slug}/query`);
    expect((await page(ownerJar, `/query?saved=${id}`)).status).toBe(404);
  });

  it("opens a shared link's SQL and parameters, and answers another project's saved query with a 404", async () => {
    const shared = await page(viewerJar, `/query?${new URLSearchParams({ sql: "SELECT {n:UInt8} <b>", "p.n": "7", max_rows: "25" })}`);
    expect(shared.status).toBe(200);
    expect(shared.html).toContain("SELECT {n:UInt8} &lt;b&gt;</textarea>");
    expect(shared.html).toMatch(/class="param-value"[^>]*value="7"/);
    expect(shared.html).toContain('value="25"');
    expect(shared.html).toContain('data-autorun="true"');
    const theirs = (await (await send(strangerKey, "GET", "/api/queries")).json()).queries[0].id as string;
    expect((await page(ownerJar, `/query?saved=${theirs}`)).status).toBe(404);
    expect((await ownerJar.form(`${srv.url}/p/${team.slug}/query/saved/${theirs}/delete`, { _csrf: csrf })).status).toBe(404);
    expect((await ownerJar.form(`${srv.url}/p/${team.slug}/query/saved/${theirs}`, { _csrf: csrf, name: "stolen", sql: "SELECT 1" })).status).toBe(404);
    expect((await (await send(strangerKey, "GET", `/api/queries/${theirs}`)).json()).query.name).toBe("all runs");
  });
});

/**
 * POST /api/query and GET /api/query/schema over real HTTP (docs/QUERY.md): the doc's examples answer what the data
 * says, params, the rows bound, who may ask, and the errors. Embedded chDB, or the server at CLICKHOUSE_URL.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QUERY_TABLES } from "../../query/index.js";
import { bearer, csrfFrom, json, loginJar, startTestServer, type TestServer } from "./harness.js";
import { query, seedProject, serverEnv, type SeededRun } from "./query-fixture.js";

const DOC = readFileSync(new URL("../../docs/QUERY.md", import.meta.url), "utf8");
/** The SQL of the doc's example that opens with `-- example: <name>`. */
const example = (name: string): string => {
  const m = new RegExp("```sql\\n-- example: " + name + "\\n([\\s\\S]*?)```").exec(DOC);
  if (!m) throw new Error(`docs/QUERY.md has no example "${name}"`);
  return m[1]!;
};

let srv: TestServer;
let key: string;
let runs: SeededRun[];
let user: { id: number; email: string };

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: serverEnv() });
  user = await srv.user();
  key = await srv.key(user.id);
  runs = await seedProject(srv.url, key, "QA");
}, 120_000);
afterAll(async () => {
  await srv?.close();
});

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe("the doc's examples", () => {
  it("cost per agent per day", async () => {
    const r = await query(srv.url, key, example("cost per agent per day"));
    expect(r.status).toBe(200);
    const expected = [...new Set(runs.map((x) => `${x.day}|${x.agent}`))].sort().map((k) => {
      const [day, agent] = k.split("|");
      const mine = runs.filter((x) => x.day === day && x.agent === agent);
      return [day, agent, String(mine.length), Math.round(sum(mine.map((x) => x.cost)) * 1e4) / 1e4];
    });
    expect(r.body.columns.map((c) => c.name)).toEqual(["day", "agent_name", "runs", "cost_usd"]);
    expect(r.body.rows).toEqual(expected);
  });

  it("slowest tools", async () => {
    const r = await query(srv.url, key, example("slowest tools"));
    expect(r.status).toBe(200);
    expect(r.body.rows.map((row) => [row[0], row[1], row[3]])).toEqual([["search", "8", Math.max(...runs.map((x) => x.searchMs))], ["QA-fetch", "8", 50]]);
  });

  it("runs that regressed after a config change", async () => {
    const r = await query(srv.url, key, example("runs that regressed after a config change"));
    expect(r.status).toBe(200);
    const regressed = runs.filter((x) => x.config === 2).map((x) => x.sdk).sort();
    expect(r.body.rows.map((row) => row[0])).toEqual(regressed);
    expect(r.body.rows.every((row) => row[3] === 3000 && row[4] === 1000)).toBe(true);
  });

  it("score means by config version", async () => {
    const r = await query(srv.url, key, example("score means by config version"));
    expect(r.status).toBe(200);
    expect(r.body.rows).toEqual([
      ["QA-coder", 1, "quality", 0.9, "2"], ["QA-coder", 2, "quality", 0.5, "2"],
      ["QA-planner", 1, "quality", 0.9, "2"], ["QA-planner", 2, "quality", 0.5, "2"],
    ]);
  });
});

describe("POST /api/query", () => {
  it("answers columns with the engine's types, binds params as values, and cuts at max_rows saying so", async () => {
    const r = await query(srv.url, key, "SELECT sdk_run_id, cost_usd FROM runs WHERE agent_name = {agent:String} AND cost_usd > {min:Float64} ORDER BY sdk_run_id", { params: { agent: "QA-planner", min: 0.02 } });
    expect(r.status).toBe(200);
    expect(r.body.columns).toEqual([{ name: "sdk_run_id", type: "String" }, { name: "cost_usd", type: "Float64" }]);
    expect(r.body.rows.map((x) => x[0])).toEqual(["QA-run-2", "QA-run-4", "QA-run-6"]);
    expect(r.body).toMatchObject({ truncated: false, limit: null });
    // A value holding quotes and SQL stays a value.
    const sneaky = await query(srv.url, key, "SELECT count() FROM runs WHERE agent_name = {a:String} OR agent_name IN {list:Array(String)}", { params: { a: "x' OR 1=1 --", list: ["QA-coder", "it's"] } });
    expect(sneaky.body.rows).toEqual([["4"]]);
    const cut = await query(srv.url, key, "SELECT number FROM (SELECT arrayJoin(range(5000)) AS number) ORDER BY number", { max_rows: 10 });
    expect(cut.status).toBe(200);
    expect(cut.body.rows).toHaveLength(10);
    expect(cut.body).toMatchObject({ truncated: true, limit: "rows" });
    const dflt = await query(srv.url, key, "SELECT arrayJoin(range(5000))");
    expect([dflt.body.rows.length, dflt.body.truncated]).toEqual([1000, true]);
  });

  it("refuses bad input with 422 naming the field, never a 500", async () => {
    const cases: [unknown, string][] = [
      [{ sql: "SELEC 1" }, "sql"],
      [{ sql: "" }, "sql"],
      [{ sql: 42 }, "sql"],
      [{ sql: "SELECT * FROM nowhere" }, "sql"],
      [{ sql: "SELECT missing_column FROM runs" }, "sql"],
      [{ sql: "SELECT 1", max_rows: 10_001 }, "max_rows"],
      [{ sql: "SELECT 1", max_rows: 0 }, "max_rows"],
      [{ sql: "SELECT 1", max_rows: "10" }, "max_rows"],
      [{ sql: "SELECT {x:UInt8}" }, "params"],
      [{ sql: "SELECT 1", params: { x: 1 } }, "params"],
      [{ sql: "SELECT {x:UInt8}", params: { x: { nested: 1 } } }, "params"],
      [{ sql: "SELECT {x:UInt8}", params: { "bad name": 1 } }, "params"],
      [{ sql: "SELECT {x:UInt8}", params: [1] }, "params"],
      [{ sql: "SELECT {x:UInt8}", params: { x: "not a number" } }, "sql"],
      [{ sql: "x".repeat(70_000) }, "sql"],
    ];
    for (const [body, field] of cases) {
      const res = await fetch(`${srv.url}/api/query`, json(key, body));
      const answer = (await res.json()) as { error: { code: string; field: string; message: string } };
      expect([JSON.stringify(body).slice(0, 60), res.status, answer.error.field]).toEqual([JSON.stringify(body).slice(0, 60), 422, field]);
      expect(answer.error.message).not.toMatch(/Stack trace|DB::Exception|runwatch/);
    }
    expect((await fetch(`${srv.url}/api/query`, json(key, "not json"))).status).toBe(400);
  });

  it("answers a hit bound as 422 naming it", async () => {
    const big = await query(srv.url, key, "SELECT repeat('x', 100000) FROM (SELECT arrayJoin(range(200)))", { max_rows: 10_000 });
    expect([big.status, big.body.error?.code, big.body.error?.limit]).toEqual([422, "query_limit", "bytes"]);
    const memory = await query(srv.url, key, "SELECT count() FROM (SELECT arrayJoin(range(10000000)) AS a) AS x INNER JOIN (SELECT arrayJoin(range(10000000)) AS b) AS y ON x.a = y.b");
    expect([memory.status, memory.body.error?.limit]).toEqual([422, "memory"]);
  });

  it("needs the read scope (any role, viewer included) or a member's session", async () => {
    const ingestOnly = await srv.key(user.id, { scope: "ingest" });
    const res = await fetch(`${srv.url}/api/query`, json(ingestOnly, { sql: "SELECT 1" }));
    expect(res.status).toBe(403);
    expect((await fetch(`${srv.url}/api/query`, json(undefined, { sql: "SELECT 1" }))).status).toBe(401);
    expect((await fetch(`${srv.url}/api/query/schema`, bearer(ingestOnly))).status).toBe(403);
    // The dashboard's session: the same answer under /query/run, with the CSRF token.
    const jar = await loginJar(srv.url, user.email);
    const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/dashboard`)).text());
    const viaSession = await jar.fetch(`${srv.url}/query/run`, { method: "POST", headers: { "content-type": "application/json", "x-csrf-token": csrf, accept: "application/json" }, body: JSON.stringify({ sql: "SELECT count() FROM runs" }) });
    expect(viaSession.status).toBe(200);
    expect(((await viaSession.json()) as { rows: unknown[][] }).rows).toEqual([["8"]]);
    const schema = await jar.fetch(`${srv.url}/query/schema`, { headers: { accept: "application/json" } });
    expect(((await schema.json()) as { tables: unknown[] }).tables).toHaveLength(QUERY_TABLES.length);
  });
});

describe("GET /api/query/schema", () => {
  it("lists the documented tables, each column with the type a query of it answers", async () => {
    const res = await fetch(`${srv.url}/api/query/schema`, bearer(key));
    expect(res.status).toBe(200);
    const { tables } = (await res.json()) as { tables: typeof QUERY_TABLES };
    expect(tables).toEqual(JSON.parse(JSON.stringify(QUERY_TABLES)));
    for (const t of QUERY_TABLES) {
      const r = await query(srv.url, key, `SELECT * FROM ${t.name} LIMIT 0`);
      expect([t.name, r.body.columns]).toEqual([t.name, t.columns.map(({ name, type }) => ({ name, type }))]);
    }
  });

  it("is what docs/QUERY.md lists, every table and column", () => {
    for (const t of QUERY_TABLES) {
      expect(DOC).toContain(`### \`${t.name}\``);
      for (const c of t.columns) expect([t.name, DOC.includes(`| \`${c.name}\` | \`${c.type}\` |`)]).toEqual([t.name, true]);
    }
  });
});

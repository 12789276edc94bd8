/**
 * The query sandbox under attack (docs/QUERY.md, "How scoping works"): over 300 hostile queries, generated from
 * families, sent with project B's key against project A's data over real HTTP. Each is refused (422 naming the field
 * or the bound) or answers nothing of A (A's rows carry a marker no answer may hold); nothing changes (A's counts and
 * a checksum, the database's tables, the empty sandbox database); and A's dashboard answers within its normal latency
 * while B's heaviest queries run. Embedded chDB, or the server at CLICKHOUSE_URL (scale mode: chdb-http).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sandboxDatabaseOf } from "../../core/ports/clickhouse.js";
import { bearer, startTestServer, type TestServer } from "./harness.js";
import { query, seedProject, serverEnv } from "./query-fixture.js";

const MARKER = "MARKERA7f3c9";

let srv: TestServer;
let keyA: string;
let keyB: string;
let db: string;

interface Hostile {
  readonly sql: string;
  readonly params?: Record<string, unknown>;
  readonly max_rows?: number;
}

/** The hostile queries, by family. */
function hostileQueries(): Hostile[] {
  const out: Hostile[] = [];
  const add = (sql: string, extra: Omit<Hostile, "sql"> = {}) => out.push({ sql, ...extra });
  /** A table reference placed every way a query can hold one. */
  const placements = (t: string) => [
    `SELECT * FROM ${t}`,
    `SELECT r.run_id FROM runs AS r INNER JOIN ${t} AS x ON 1 = 1`,
    `SELECT * FROM runs WHERE sdk_run_id IN (SELECT * FROM ${t})`,
    `SELECT count() FROM runs WHERE sdk_run_id IN ${t}`,
    `WITH x AS (SELECT * FROM ${t}) SELECT * FROM x`,
    `SELECT sdk_run_id FROM runs UNION ALL SELECT toString(tuple(*)) FROM ${t}`,
    `SELECT (SELECT count() FROM ${t})`,
    `SELECT * FROM (SELECT * FROM (SELECT * FROM ${t}))`,
  ];
  // Table functions, each with argument shapes.
  const fns: Record<string, string[]> = {
    file: ["'/etc/passwd'", "'/etc/passwd', 'LineAsString'", "'../../clickhouse/metadata/*.sql', 'LineAsString'"],
    url: ["'http://127.0.0.1:1/', 'LineAsString'", "'http://169.254.169.254/latest/meta-data/', 'LineAsString', 's String'"],
    remote: ["'127.0.0.1', system.one", `'127.0.0.1', '${"{db}"}', 'agent_runs'`],
    remoteSecure: ["'127.0.0.1', system.one"],
    s3: ["'http://127.0.0.1:1/b/x.csv'"],
    merge: [`'${"{db}"}', '.*'`, "currentDatabase(), '.*'", "REGEXP('.*'), '.*'"],
    cluster: ["'default', system.one"],
    clusterAllReplicas: ["'default', system.one"],
    input: ["'x String'"],
    numbers: ["1e12", "1000000000000", "0, 1e12"],
    numbers_mt: ["1e12"],
    zeros: ["1e12"],
    generateRandom: ["'a String', 1, 10, 2"],
    view: [`SELECT * FROM ${"{db}"}.agent_runs`],
    executable: ["'cat /etc/passwd', 'TSV', 'x String'"],
    mysql: ["'127.0.0.1:3306', 'db', 't', 'u', 'p'"],
    postgresql: ["'127.0.0.1:5432', 'db', 't', 'u', 'p'"],
    dictionary: ["'d'"],
    values: ["'x UInt8', 1"],
    format: ["JSONEachRow, '{\"a\":1}'"],
    loop: [`${"{db}"}.agent_runs`],
    mergeTreeIndex: [`'${"{db}"}', 'agent_runs'`],
    fuzzJSON: ["'{}'"],
    null: ["'x UInt8'"],
    hdfs: ["'hdfs://127.0.0.1/x', 'TSV', 'x String'"],
  };
  for (const [fn, shapes] of Object.entries(fns)) {
    for (const args of shapes) {
      const t = `${fn}(${args})`;
      add(`SELECT * FROM ${t}`);
      add(`SELECT * FROM runs AS r INNER JOIN ${t} AS x ON 1 = 1`);
      add(`WITH x AS (SELECT * FROM ${t}) SELECT * FROM x`);
      add(`SELECT * FROM runs WHERE sdk_run_id IN (SELECT * FROM ${t})`);
    }
  }
  // system.*, information_schema, and the physical tables, qualified, unqualified and quoted, in every placement.
  const tables = [
    "system.tables", "system.databases", "system.columns", "system.one", "system.query_log", "system.settings", "system.processes",
    "system.users", "system.parts", "system.dictionaries", "system.numbers", "system.clusters",
    "information_schema.tables", "INFORMATION_SCHEMA.COLUMNS", "information_schema.schemata",
    "{db}.agent_runs", "{db}.agent_events", "{db}.scores", "{db}.llm_calls", "{db}.run_costs", "{db}.run_text",
    "`{db}`.`agent_runs`", "\"{db}\".\"agent_events\"", "`system`.`tables`", "SYSTEM.tables", "system . tables", "default.agent_runs",
    "{db}_sandbox.agent_runs", "agent_runs", "agent_events", "run_costs", "`agent_runs`", "\"agent_events\"",
  ];
  for (const t of tables) for (const sql of placements(t)) add(sql);
  // Comments and quoting.
  for (const sql of [
    "SELECT 1 -- harmless\nUNION ALL SELECT count() FROM system.tables",
    "SELECT 1 /* */ UNION ALL /* x */ SELECT count() FROM {db}.agent_runs",
    "SELECT 1 # hash comment\nUNION ALL SELECT count() FROM {db}.agent_runs",
    "SELECT 1 /* unterminated",
    "SELECT 'a'' UNION ALL SELECT payload FROM {db}.agent_events --'",
    "SELECT 'a\\' UNION ALL SELECT payload FROM {db}.agent_events --'",
    "SELECT `a`` FROM {db}.agent_events`",
    "SELECT \"x\" FROM {db}.agent_events",
    "SELECT $$ UNION ALL SELECT payload FROM {db}.agent_events $$",
    "SELECT $tag$'$tag$ FROM {db}.agent_events",
    "SELECT * FROM runs WHERE agent_name = '' OR 1 = 1 UNION ALL SELECT * FROM {db}.agent_runs",
    "SELECT * FROM runs) UNION ALL (SELECT * FROM {db}.agent_runs",
    "SELECT 1) SETTINGS readonly = 0 --",
    "SELECT 1\n) UNION ALL SELECT payload FROM {db}.agent_events WHERE (1",
    "SELECT * FROM `runs` AS `system.tables`",
    "SELECT * FROM `system.tables`",
    "SELECT * FROM `{db}.agent_runs`",
  ]) add(sql);
  // Unicode look-alikes of names (Cyrillic ѕ, е, о; fullwidth; zero-width space).
  for (const t of ["ѕystem.tables", "systеm.one", "system.оne", "ｓｙｓｔｅｍ.tables", "sys\u200btem.tables", "runѕ", "agent_runѕ", "{db}\u200b.agent_runs"]) {
    add(`SELECT * FROM ${t}`);
    add(`SELECT count() FROM runs WHERE sdk_run_id IN ${t}`);
  }
  // SETTINGS, FORMAT, INTO OUTFILE, several statements.
  for (const sql of [
    "SELECT 1 SETTINGS readonly = 0", "SELECT * FROM runs SETTINGS max_execution_time = 100000", "SELECT * FROM (SELECT 1 SETTINGS max_threads = 64)",
    "SELECT 1 SETTINGS max_memory_usage = 0", "SELECT 1 FORMAT JSON", "SELECT 1 FORMAT TabSeparated", "SELECT 1 INTO OUTFILE '/tmp/x.csv'",
    "SELECT 1 INTO OUTFILE '/tmp/x.csv' FORMAT CSV", "SELECT 1; SELECT count() FROM system.tables", "SELECT 1; DROP TABLE {db}.agent_runs",
    "SELECT 1;", ";", "SELECT 1;; SELECT 2", "SELECT 1\n;\nINSERT INTO {db}.agent_runs (project_id) VALUES (1)",
  ]) add(sql);
  // Writes and everything that is not a SELECT.
  for (const sql of [
    "INSERT INTO runs SELECT * FROM runs", "INSERT INTO {db}.agent_runs SELECT * FROM {db}.agent_runs", "INSERT INTO FUNCTION file('/tmp/x', 'CSV') SELECT 1",
    "ALTER TABLE {db}.agent_runs DELETE WHERE 1", "ALTER TABLE {db}.agent_runs UPDATE status = 'x' WHERE 1", "ALTER TABLE {db}.agent_runs DROP COLUMN status",
    "DROP TABLE {db}.agent_runs", "DROP DATABASE {db}", "DROP TABLE IF EXISTS runs", "CREATE TABLE t (x UInt8) ENGINE = Memory",
    "CREATE TABLE {db}_sandbox.runs ENGINE = Memory AS SELECT * FROM {db}.agent_runs", "CREATE VIEW v AS SELECT * FROM {db}.agent_runs",
    "CREATE DICTIONARY d (x UInt8) PRIMARY KEY x SOURCE(CLICKHOUSE(TABLE 'agent_runs')) LAYOUT(FLAT()) LIFETIME(0)",
    "TRUNCATE TABLE {db}.agent_runs", "KILL QUERY WHERE 1", "SYSTEM SHUTDOWN", "SYSTEM DROP DNS CACHE", "SYSTEM STOP MERGES",
    "OPTIMIZE TABLE {db}.agent_runs FINAL", "SET readonly = 0", "SET max_execution_time = 0", "USE system", "USE {db}",
    "GRANT ALL ON *.* TO default", "CREATE USER evil IDENTIFIED BY 'x'", "RENAME TABLE {db}.agent_runs TO {db}.x",
    "EXCHANGE TABLES {db}.agent_runs AND {db}.scores", "DELETE FROM {db}.agent_runs WHERE 1", "UPDATE {db}.agent_runs SET status = 'x' WHERE 1",
    "DETACH TABLE {db}.agent_runs", "ATTACH TABLE {db}.agent_runs", "BACKUP TABLE {db}.agent_runs TO File('x')", "EXPLAIN SELECT * FROM {db}.agent_runs",
    "EXPLAIN AST SELECT 1", "SHOW TABLES FROM {db}", "SHOW DATABASES", "DESCRIBE TABLE {db}.agent_runs", "DESCRIBE runs", "EXISTS TABLE {db}.agent_runs",
    "CHECK TABLE {db}.agent_runs", "SHOW CREATE TABLE {db}.agent_runs", "WATCH v", "SELECT * FROM runs FINAL SAMPLE 0.1",
  ]) add(sql);
  // Parameter injection.
  const inj = "' UNION ALL SELECT payload FROM {db}.agent_events --";
  add("SELECT {x:String}", { params: { x: inj } });
  add("SELECT * FROM runs WHERE agent_name = {x:String}", { params: { x: `x' OR 1=1 --` } });
  add("SELECT * FROM runs WHERE agent_name IN {x:Array(String)}", { params: { x: [inj, "a'b"] } });
  add("SELECT * FROM {t:Identifier}", { params: { t: "system.tables" } });
  add("SELECT * FROM {t:Identifier}", { params: { t: "{db}.agent_runs" } });
  add("SELECT '{x:String}'", { params: { x: "') UNION ALL SELECT payload FROM {db}.agent_events --" } });
  add("SELECT '{x:String) UNION ALL SELECT payload FROM {db}.agent_events --}'", { params: { x: "1" } });
  add("SELECT `{x:String}` FROM runs", { params: { x: "1" } });
  add("SELECT {x:String} -- {y:String}", { params: { x: "a", y: "b" } });
  add("SELECT {x:UInt8}", { params: { x: "1) UNION ALL SELECT count() FROM system.tables --" } });
  add("SELECT {x:String}", { params: { x: "\\' UNION ALL SELECT 1 --" } });
  add("SELECT {x:String}", { params: { "x}": "1" } });
  add("SELECT {x:String}", { params: { x: "a", "__proto__": "b" } });
  add("SELECT {x:String}", { params: { x: ["a", ["nested"]] } });
  // Huge answers, cartesian products, sleeps, numbers, deep expressions.
  add("SELECT * FROM runs AS a, runs AS b, runs AS c, runs AS d, events AS e", { max_rows: 10_000 });
  add("SELECT repeat('x', 1000000) FROM (SELECT arrayJoin(range(100)))", { max_rows: 10_000 });
  add("SELECT arrayJoin(range(100000)) AS n", { max_rows: 10_000 });
  for (const sql of [
    "SELECT sleep(3)", "SELECT sleepEachRow(1) FROM runs", "SELECT sleep(1) FROM runs", "SELECT count() FROM numbers(1e12)", "SELECT count() FROM system.numbers",
    "SELECT " + "(".repeat(3000) + "1" + ")".repeat(3000), "SELECT " + Array.from({ length: 20_000 }, () => "1").join("+"),
    "WITH RECURSIVE t AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM t) SELECT count() FROM t",
    "SELECT arrayJoin(range(1000000000))", "SELECT groupArray(repeat('x', 10000)) FROM (SELECT arrayJoin(range(100000)))",
  ]) add(sql);
  // Functions that reach outside the rows.
  for (const f of [
    "dictGet('d', 'x', 1)", "dictGetString('d', 'x', toUInt64(1))", "dictHas('d', 1)", "joinGet('j', 'x', 1)", "getSetting('max_threads')",
    "getServerSetting('path')", "hostName()", "fqdn()", "version()", "uptime()", "serverUUID()", "currentDatabase()", "currentUser()",
    "getMacro('x')", "tcpPort()", "displayName()", "buildId()", "file('/etc/passwd')", "filesystemAvailable()", "throwIf(0)",
    "hasColumnInTable('system', 'tables', 'name')", "queryID()", "currentQueryID()", "initialQueryID()", "getOSKernelVersion()",
    "catboostEvaluate('/x', 1)", "getClientHTTPHeader('x')", "addressToSymbol(1)", "demangle('x')", "globalVariable('x')",
  ]) {
    add(`SELECT ${f}`);
    add(`SELECT sdk_run_id FROM runs WHERE ${f} IS NOT NULL`);
  }
  return out.map((q) => ({ ...q, sql: q.sql.split("{db}").join(db), ...(q.params ? { params: JSON.parse(JSON.stringify(q.params).split("{db}").join(db)) } : {}) }));
}

async function stateOfA(): Promise<string> {
  const ch = srv.ports.clickhouse;
  const rows = await ch.query<Record<string, unknown>>(
    `SELECT (SELECT count() FROM agent_runs FINAL) AS runs, (SELECT count() FROM agent_events FINAL) AS events, (SELECT count() FROM scores FINAL) AS scores,
       (SELECT sum(cityHash64(payload)) FROM agent_events FINAL) AS checksum,
       (SELECT groupArray(name) FROM (SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name)) AS tables,
       (SELECT count() FROM system.tables WHERE database = '${sandboxDatabaseOf(db)}') AS sandbox_tables,
       (SELECT groupArray(name) FROM (SELECT name FROM system.databases WHERE name LIKE '${db}%' ORDER BY name)) AS databases`,
  );
  return JSON.stringify(rows);
}

async function dashboardMs(): Promise<number> {
  const t = performance.now();
  const res = await fetch(`${srv.url}/api/runs?limit=50`, bearer(keyA));
  expect(res.status).toBe(200);
  expect(await res.text()).toContain(MARKER);
  return performance.now() - t;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { ...serverEnv(), RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000" } });
  db = srv.ports.config.clickhouseDatabase;
  const a = await srv.user();
  const b = await srv.user();
  keyA = await srv.key(a.id);
  keyB = await srv.key(b.id);
  await seedProject(srv.url, keyA, MARKER);
  await seedProject(srv.url, keyB, "PROJB");
}, 180_000);
afterAll(async () => {
  await srv?.close();
});

describe("the query sandbox against project B's hostile queries", () => {
  it("refuses or answers nothing of A for every one of over 300 queries, and changes nothing", async () => {
    const queries = hostileQueries();
    expect(queries.length).toBeGreaterThanOrEqual(300);
    const before = await stateOfA();
    const seen = { refused: 0, answered: 0 };
    for (const q of queries) {
      const r = await query(srv.url, keyB, q.sql, { ...(q.params ? { params: q.params } : {}), ...(q.max_rows ? { max_rows: q.max_rows } : {}) });
      const label = q.sql.slice(0, 120);
      expect([label, r.status]).toEqual([label, r.status === 200 ? 200 : 422]);
      expect([label, r.text.includes(MARKER)]).toEqual([label, false]);
      expect([label, /Stack trace|DB::Exception/.test(r.text)]).toEqual([label, false]);
      if (r.status === 422) {
        seen.refused++;
        expect([label, r.body.error?.field ?? r.body.error?.limit]).toEqual([label, expect.stringMatching(/^(sql|params|max_rows|time|memory|bytes|rows)$/)]);
      } else seen.answered++;
    }
    expect(await stateOfA()).toBe(before);
    // Most are refused before they run; what ran answered B's own rows or none.
    expect(seen.refused).toBeGreaterThan(seen.answered);
    // B's own data is all B sees.
    const own = await query(srv.url, keyB, "SELECT groupUniqArray(agent_name) FROM runs");
    expect(own.text).toContain("PROJB-planner");
    expect(own.text).not.toContain(MARKER);
  }, 600_000);

  it("keeps A's dashboard within its normal latency while B's heaviest queries run, and stops them at the time bound", async () => {
    const baseline: number[] = [];
    for (let i = 0; i < 7; i++) baseline.push(await dashboardMs());
    const heavy = "SELECT count() FROM (SELECT arrayJoin(range(1000000)) AS a) AS x CROSS JOIN (SELECT arrayJoin(range(1000000)) AS b) AS y WHERE a + b > 0";
    const started = Date.now();
    const running = [query(srv.url, keyB, heavy), query(srv.url, keyB, heavy)];
    await new Promise((r) => setTimeout(r, 1_000));
    const during: number[] = [];
    while (Date.now() - started < 20_000) during.push(await dashboardMs());
    const answers = await Promise.all(running);
    for (const a of answers) expect([a.status, a.body.error?.limit]).toEqual([422, "time"]);
    // B's two queries ran one after the other (a project's queries queue): the second ended after two time bounds.
    expect(Date.now() - started).toBeGreaterThan(2 * 29_000);
    expect(median(during)).toBeLessThan(Math.max(10 * median(baseline), median(baseline) + 500));
  }, 180_000);
});

/**
 * deploy/clickhouse/chdb-http.ts (the ClickHouse engine of chDB over ClickHouse's HTTP interface) driven by
 * the real @clickhouse/client: the protocol subset Runwatch's server adapter uses. Needs no external server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ClickHouseError, createClient, TupleParam, type ClickHouseClient } from "@clickhouse/client";
import { startChdbHttp, tsvUnescape } from "../../deploy/clickhouse/chdb-http.js";

let dir: string;
let srv: Awaited<ReturnType<typeof startChdbHttp>>;
const clients: ClickHouseClient[] = [];
const client = (opts: Parameters<typeof createClient>[0] = {}) => {
  const c = createClient({ url: srv.url, ...opts });
  clients.push(c);
  return c;
};

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "chdb-http-"));
  srv = await startChdbHttp({ dataDir: dir, port: 0 });
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await srv?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("chdb-http", () => {
  it("answers ping and reports a modern engine", async () => {
    const c = client();
    expect((await c.ping()).success).toBe(true);
    const [row] = await (await c.query({ query: "SELECT version() AS v", format: "JSONEachRow" })).json<{ v: string }>();
    expect(Number(row.v.split(".")[0])).toBeGreaterThanOrEqual(24);
  });

  it("inserts JSONEachRow and selects with bound parameters (strings round-trip exactly)", async () => {
    const admin = client();
    await admin.command({ query: "CREATE DATABASE IF NOT EXISTS t1" });
    const c = client({ database: "t1", clickhouse_settings: { date_time_output_format: "iso" } });
    await c.command({ query: "CREATE TABLE ev (id UInt64, s String, at DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY id" });
    const tricky = "tab\there\nnew line 'quote' back\\slash ünïcode";
    await c.insert({ table: "ev", format: "JSONEachRow", values: [{ id: 1, s: tricky, at: "2026-11-23 10:00:00.123" }, { id: 2, s: "b", at: "2026-11-23 10:00:01.000" }] });
    const rows = await (await c.query({
      query: "SELECT toString(id) AS id, s, at FROM ev WHERE s = {s:String} AND id IN {ids:Array(UInt64)}",
      query_params: { s: tricky, ids: [1, 2, 3] },
      format: "JSONEachRow",
    })).json<{ id: string; s: string; at: string }>();
    expect(rows).toEqual([{ id: "1", s: tricky, at: "2026-11-23T10:00:00.123Z" }]);
  });

  it("binds Array and Tuple parameters whose strings hold quotes, backslashes, tabs and braces", async () => {
    const c = client();
    const tricky = ["it's", "back\\slash", "tab\there", "x' OR 1=1 --", "{s:String}", "new\nline"];
    const [row] = await (await c.query({
      query: "SELECT {a:Array(String)} AS a, {t:Tuple(String, UInt8)}.1 AS t, {s:String} AS s",
      query_params: { a: tricky, t: new TupleParam(["q'uote", 1]), s: "plain's" },
      format: "JSONEachRow",
    })).json<{ a: string[]; t: string; s: string }>();
    expect(row).toEqual({ a: tricky, t: "q'uote", s: "plain's" });
  });

  it("inserts JSONCompactEachRow into a column list, the other columns taking their defaults", async () => {
    const admin = client();
    await admin.command({ query: "CREATE DATABASE IF NOT EXISTS t2" });
    const c = client({ database: "t2" });
    await c.command({ query: "CREATE TABLE cols (id UInt64, s String, d String DEFAULT 'dflt') ENGINE = MergeTree ORDER BY id" });
    await c.insert({ table: "cols", format: "JSONCompactEachRow", columns: ["s", "id"], values: [["x\ty", 2], ["a", 1]] });
    const rows = await (await c.query({ query: "SELECT toString(id) AS id, s, d FROM cols ORDER BY id", format: "JSONEachRow" })).json();
    expect(rows).toEqual([{ id: "1", s: "a", d: "dflt" }, { id: "2", s: "x\ty", d: "dflt" }]);
  });

  it("accepts parameters in a multipart body (long parameter lists)", async () => {
    const c = client({ use_multipart_params: true } as never);
    const keys = Array.from({ length: 2000 }, (_, i) => `key-${i}-${"x".repeat(20)}`);
    const [row] = await (await c.query({ query: "SELECT length({keys:Array(String)}) AS n, {who:String} AS who", query_params: { keys, who: "a\tb" }, format: "JSONEachRow" })).json<{ n: number; who: string }>();
    expect(row).toEqual({ n: 2000, who: "a\tb" });
  });

  it("keeps databases apart per request (concurrent clients on different databases)", async () => {
    const admin = client();
    await admin.command({ query: "CREATE DATABASE IF NOT EXISTS da" });
    await admin.command({ query: "CREATE DATABASE IF NOT EXISTS db2" });
    const a = client({ database: "da" });
    const b = client({ database: "db2" });
    const [ra, rb] = await Promise.all([
      a.query({ query: "SELECT currentDatabase() AS d", format: "JSONEachRow" }).then((r) => r.json<{ d: string }>()),
      b.query({ query: "SELECT currentDatabase() AS d", format: "JSONEachRow" }).then((r) => r.json<{ d: string }>()),
    ]);
    expect([ra[0].d, rb[0].d]).toEqual(["da", "db2"]);
  });

  it("answers a quick query while a slow one runs on the same database, as a ClickHouse server does", async () => {
    const admin = client();
    await admin.command({ query: "CREATE DATABASE IF NOT EXISTS busy" });
    const c = client({ database: "busy" });
    await c.command({ query: "CREATE TABLE IF NOT EXISTS t (x UInt64) ENGINE = MergeTree ORDER BY x" });
    await c.insert({ table: "t", values: [{ x: 1 }], format: "JSONEachRow" });
    const started = Date.now();
    let slowDone = 0;
    const slow = c.query({ query: "SELECT sleepEachRow(0.5) FROM numbers(4) SETTINGS function_sleep_max_microseconds_per_block = 3000000", format: "JSONEachRow" })
      .then((r) => r.json()).then(() => { slowDone = Date.now(); });
    await new Promise((r) => setTimeout(r, 200));
    const rows = await (await c.query({ query: "SELECT count() AS n FROM t", format: "JSONEachRow" })).json<{ n: string }>();
    const quickDone = Date.now();
    expect(Number(rows[0]!.n)).toBe(1);
    await slow;
    expect(slowDone - started).toBeGreaterThanOrEqual(1_900);
    expect(quickDone).toBeLessThan(slowDone); // it did not wait behind the slow read
  });

  it("reports errors as ClickHouseError with the engine's code, and gzips when asked", async () => {
    const c = client({ compression: { response: true } });
    const err = await c.query({ query: "SELECT * FROM no_such_table", format: "JSONEachRow" }).then(() => undefined, (e) => e);
    expect(err).toBeInstanceOf(ClickHouseError);
    expect((err as ClickHouseError).code).toBe("60");
    const rows = await (await c.query({ query: "SELECT number FROM numbers(3)", format: "JSONEachRow" })).json<{ number: string }>();
    expect(rows.map((r) => Number(r.number))).toEqual([0, 1, 2]);
  });

  it("unescapes TSV parameter values exactly", () => {
    expect(tsvUnescape("a\\tb\\\\c\\nd\\'e")).toBe("a\tb\\c\nd'e");
    expect(tsvUnescape("plain")).toBe("plain");
  });
});

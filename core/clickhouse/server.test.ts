/**
 * The @clickhouse/client transport on its own, against the server at CLICKHOUSE_URL, with no session
 * settings, so that it runs on any server version (Debian's 18.16 included). The EventStore suite runs the
 * full schema on servers new enough for it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import type { ClickHouse } from "../ports/clickhouse.js";
import { clickHouseServerVersion, connectClickHouse, MIN_SERVER_MAJOR, openClickHouseServer } from "./server.js";

const url = process.env.CLICKHOUSE_URL;

const suite = () => {
  const database = `runwatch_transport_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  let ch: ClickHouse;
  let version = "";
  beforeAll(async () => {
    version = await clickHouseServerVersion(url!);
    ch = await connectClickHouse(url!, database, {});
  });
  afterAll(async () => {
    await ch?.exec(`DROP DATABASE IF EXISTS ${database}`);
    await ch?.close();
  });

  it("creates its database, runs DDL, inserts JSONEachRow and reads back folded rows", async () => {
    await ch.exec("CREATE TABLE IF NOT EXISTS t (user_id UInt64, k String, v UInt32, note String) ENGINE = ReplacingMergeTree(v) ORDER BY (user_id, k)");
    await ch.insert("t", [{ user_id: 1, k: "a", v: 1, note: "old" }, { user_id: 1, k: "b", v: 1, note: "é\n\"x\"" }]);
    await ch.insert("t", [{ user_id: 1, k: "a", v: 2, note: "new" }]);
    const rows = await ch.query<{ user_id: unknown; k: string; v: number; note: string }>("SELECT user_id, k, v, note FROM t FINAL ORDER BY k");
    expect(rows.map((r) => ({ ...r, user_id: Number(r.user_id) }))).toEqual([
      { user_id: 1, k: "a", v: 2, note: "new" },
      { user_id: 1, k: "b", v: 1, note: "é\n\"x\"" },
    ]);
    const dbs = await ch.query<{ d: string }>("SELECT currentDatabase() AS d");
    expect(dbs).toEqual([{ d: database }]);
  });

  it("inserts rows already serialised as JSONCompactEachRow in the columns named (insertEncoded)", async () => {
    await ch.exec("CREATE TABLE IF NOT EXISTS enc (k String, v UInt32, d String DEFAULT 'dflt') ENGINE = MergeTree ORDER BY k");
    const rows = [{ v: 1, k: "é\n\"x\"" }, { v: 2, k: "b" }];
    await ch.insertEncoded("enc", { columns: ["v", "k"], bytes: new TextEncoder().encode(rows.map((r) => JSON.stringify([r.v, r.k])).join("\n") + "\n") });
    expect(await ch.query("SELECT k, v, d FROM enc ORDER BY v")).toEqual(rows.map((r) => ({ k: r.k, v: r.v, d: "dflt" })));
  });

  it("openClickHouseServer accepts a current server and refuses a too-old one with a clear message", async () => {
    if (Number(version.split(".")[0]) < MIN_SERVER_MAJOR) {
      await expect(openClickHouseServer(url!, database)).rejects.toThrow(/too old/);
    } else {
      const full = await openClickHouseServer(url!, database);
      expect(await full.query("SELECT {x:UInt8} AS x", { x: 7 })).toEqual([{ x: 7 }]);
      await full.close();
    }
  });
};

if (!url && process.env.REQUIRE_SERVICES === "1") {
  describe("ClickHouse server transport", () => {
    it("needs CLICKHOUSE_URL", () => { throw new Error("REQUIRE_SERVICES=1 but CLICKHOUSE_URL is not set"); });
  });
} else if (!url) {
  describe.skip("ClickHouse server transport (skipped: CLICKHOUSE_URL is not set)", suite);
} else {
  describe("ClickHouse server transport", suite);
}

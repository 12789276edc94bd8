/**
 * The @clickhouse/client HTTP transport against a real ClickHouse *server*: Debian's clickhouse-server 18.16
 * (CLICKHOUSE_LEGACY_URL; deploy/clickhouse.sh start-legacy). Runwatch's schema needs DateTime64 and query
 * parameters, which 18.16 lacks, so this checks what 18.16 can answer — ping, JSONEachRow insert and select,
 * ReplacingMergeTree with FINAL, server errors surfacing as ClickHouseError — and pins the known gap
 * (query parameters) so docs/SCALE.md stays true. The full EventStore runs against chdb-http (CLICKHOUSE_URL).
 */
import { afterAll, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { ClickHouseError, createClient, type ClickHouseClient } from "@clickhouse/client";
import { describeWith } from "./services.js";

let client: ClickHouseClient | undefined;
const db = `runwatch_legacy_${randomUUID().replaceAll("-", "").slice(0, 10)}`;
afterAll(async () => {
  if (!client) return;
  await client.command({ query: `DROP DATABASE IF EXISTS ${db}` }).catch(() => {});
  await client.close();
});

describeWith(["CLICKHOUSE_LEGACY_URL"], "@clickhouse/client against clickhouse-server 18.16", () => {
  it("pings, inserts JSONEachRow and reads it back, deduplicated with FINAL", async () => {
    client = createClient({ url: process.env.CLICKHOUSE_LEGACY_URL, application: "runwatch-test" });
    expect((await client.ping()).success).toBe(true);
    const version = await (await client.query({ query: "SELECT version() AS v", format: "JSONEachRow" })).json<{ v: string }>();
    expect(version[0].v).toMatch(/^\d+\.\d+/);
    await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${db}` });
    await client.command({
      query: `CREATE TABLE ${db}.runs (user_id UInt64, external_id String, status String, version UInt64)
              ENGINE = ReplacingMergeTree(version) ORDER BY (user_id, external_id)`,
    });
    await client.insert({
      table: `${db}.runs`,
      format: "JSONEachRow",
      values: [
        { user_id: 1, external_id: "a", status: "running", version: 1 },
        { user_id: 1, external_id: "b", status: "running", version: 1 },
      ],
    });
    await client.insert({ table: `${db}.runs`, format: "JSONEachRow", values: [{ user_id: 1, external_id: "a", status: "success", version: 2 }] });
    const rows = await (await client.query({
      query: `SELECT external_id, status, toString(version) AS version FROM ${db}.runs FINAL ORDER BY external_id`,
      format: "JSONEachRow",
    })).json<{ external_id: string; status: string; version: string }>();
    expect(rows).toEqual([
      { external_id: "a", status: "success", version: "2" },
      { external_id: "b", status: "running", version: "1" },
    ]);
  });

  it("surfaces server errors with the server's code (a plain Error: 18.16's text predates the client's error format)", async () => {
    client ??= createClient({ url: process.env.CLICKHOUSE_LEGACY_URL });
    const err = await client.query({ query: "SELECT * FROM no_such_table_here", format: "JSONEachRow" }).then(() => undefined, (e) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(ClickHouseError); // modern servers end the message with "(UNKNOWN_TABLE)"; 18.16 does not
    expect((err as Error).message).toMatch(/^Code: 60\b.*no_such_table_here/s);
  });

  it("lacks query parameters and DateTime64, which Runwatch's SQL needs (the documented gap)", async () => {
    client ??= createClient({ url: process.env.CLICKHOUSE_LEGACY_URL });
    await expect(client.query({ query: "SELECT {x:UInt8} AS x", query_params: { x: 1 }, format: "JSONEachRow" })).rejects.toThrow(/param_x|Unknown setting/i);
    await expect(client.query({ query: "SELECT toDateTime64('2026-01-01 00:00:00', 3) AS t", format: "JSONEachRow" })).rejects.toThrow(/toDateTime64|Unknown function/i);
  });
});

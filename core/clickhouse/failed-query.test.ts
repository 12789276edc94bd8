/**
 * A query that fails after it began to answer (a throwIf on a late row, as a memory or time bound would) leaves its
 * partial answer in its chDB session; the next read on that session must still answer only its own rows
 * (session-pool.ts, afterFailure). On chDB always, and through a ClickHouse endpoint when CLICKHOUSE_URL is set
 * (chdb-http routes its sessions the same way).
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { openChdb } from "./chdb.js";
import { openClickHouseServer } from "./server.js";
import type { ClickHouse } from "../ports/clickhouse.js";

const FAILS_LATE = "SELECT number, throwIf(number = 200000, 'late failure') AS failed FROM numbers(300000) SETTINGS max_block_size = 1000";

async function checkNextReads(ch: ClickHouse): Promise<void> {
  for (let round = 0; round < 3; round++) {
    await expect(ch.query(FAILS_LATE)).rejects.toThrow(/late failure/);
    // Sequential reads take the same session; so do concurrent ones queued behind each other.
    expect(await ch.query<{ x: number }>("SELECT 1 AS x")).toEqual([{ x: 1 }]);
    const [a, b] = await Promise.all([ch.query<{ y: number }>("SELECT 2 AS y"), ch.query<{ z: number }>("SELECT 3 AS z")]);
    expect([a, b]).toEqual([[{ y: 2 }], [{ z: 3 }]]);
  }
}

describe("a read after a query that failed while answering", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it("answers only its own rows on chDB", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "runwatch-failed-query-"));
    dirs.push(dir);
    const ch = await openChdb(dir, "runwatch");
    try {
      await checkNextReads(ch);
    } finally {
      await ch.close();
    }
  }, 60_000);

  it.skipIf(!process.env.CLICKHOUSE_URL)("answers only its own rows through a ClickHouse endpoint", async () => {
    const database = `runwatch_test_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const ch = await openClickHouseServer(process.env.CLICKHOUSE_URL!, database);
    try {
      await checkNextReads(ch);
      await ch.exec(`DROP DATABASE IF EXISTS ${database}`);
    } finally {
      await ch.close();
    }
  }, 60_000);
});

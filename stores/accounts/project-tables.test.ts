/**
 * A project's deletion removes its rows from every ClickHouse table that holds a project's rows: a table added by a
 * migration with a project_id column and not listed in PROJECT_TABLES would keep a deleted project's data.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { openChdb } from "../../core/clickhouse/chdb.js";
import { migrateClickHouse } from "../../core/clickhouse/migrate.js";
import { PROJECT_TABLES } from "./project-ownership.js";

describe("a project's deletion", () => {
  let dir = "";
  let ch: ClickHouse;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "runwatch-project-tables-"));
    ch = await openChdb(dir, "runwatch");
    await migrateClickHouse(ch);
  });
  afterAll(async () => {
    await ch?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("clears every table with a project_id column", async () => {
    const rows = await ch.query<{ table: string }>(
      "SELECT DISTINCT table FROM system.columns WHERE database = currentDatabase() AND name = 'project_id' ORDER BY table",
    );
    expect(rows.length).toBeGreaterThan(5);
    expect(rows.map((r) => r.table).sort()).toEqual([...PROJECT_TABLES].sort());
  });
});

/**
 * ClickHouse schema migrations: core/clickhouse/migrations/NNN_*.sql, recorded in schema_migrations.
 *
 * ClickHouse has no transactional DDL and no advisory locks, so concurrency safety comes from the files:
 * every statement must be idempotent (CREATE ... IF NOT EXISTS, ALTER ... ADD COLUMN IF NOT EXISTS).
 * Several processes starting at once may then all apply a pending migration; the result is the same,
 * and schema_migrations (a ReplacingMergeTree keyed by version) folds their records into one.
 */
import { fileURLToPath } from "node:url";
import type { ClickHouse } from "../ports/clickhouse.js";
import { readMigrationFiles } from "../postgres/migration-files.js";

const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations/", import.meta.url));

export async function migrateClickHouse(ch: ClickHouse, dir: string = MIGRATIONS_DIR): Promise<number[]> {
  await ch.exec(`CREATE TABLE IF NOT EXISTS schema_migrations
    (version UInt32, name String, applied_at DateTime64(3, 'UTC') DEFAULT now64(3))
    ENGINE = ReplacingMergeTree ORDER BY version`);
  const done = new Set(
    (await ch.query<{ version: number }>("SELECT DISTINCT version FROM schema_migrations")).map((r) => Number(r.version)),
  );
  const applied: number[] = [];
  for (const m of await readMigrationFiles(dir)) {
    if (done.has(m.version)) continue;
    for (const stmt of m.statements) await ch.exec(stmt);
    await ch.insert("schema_migrations", [{ version: m.version, name: m.name }]);
    applied.push(m.version);
  }
  return applied;
}

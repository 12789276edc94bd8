/**
 * ClickHouse schema migrations: core/clickhouse/migrations/NNN_*.sql, recorded in schema_migrations.
 *
 * ClickHouse has no transactional DDL and no advisory locks, so concurrency safety comes from the files:
 * every statement must be idempotent (CREATE ... IF NOT EXISTS, ALTER ... ADD COLUMN IF NOT EXISTS).
 * Several processes starting at once may then all apply a pending migration; the result is the same,
 * and schema_migrations (a ReplacingMergeTree keyed by version) folds their records into one.
 *
 * A migration that only tunes storage may name the MergeTree settings it needs with
 * `-- @requires-merge-tree-setting <name>`: on a server that does not know one of them (an older ClickHouse than
 * chDB's) its statements are skipped and the migration is recorded as done, since the schema is the same without it.
 */
import { fileURLToPath } from "node:url";
import type { ClickHouse } from "../ports/clickhouse.js";
import { readMigrationFiles, type MigrationFile } from "../postgres/migration-files.js";

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
    if (await supports(ch, m)) for (const stmt of m.statements) await ch.exec(stmt);
    await ch.insert("schema_migrations", [{ version: m.version, name: m.name }]);
    applied.push(m.version);
  }
  return applied;
}

const REQUIRES_SETTING = /^requires-merge-tree-setting ([a-z_]+)$/;

/** Whether the server knows every MergeTree setting the migration's directives name; throws on any other directive. */
async function supports(ch: ClickHouse, m: MigrationFile): Promise<boolean> {
  const settings = m.directives.map((d) => {
    const name = REQUIRES_SETTING.exec(d)?.[1];
    if (name === undefined) throw new Error(`${m.name}: unknown migration directive "-- @${d}"`);
    return name;
  });
  if (settings.length === 0) return true;
  const known = await ch.query<{ name: string }>("SELECT name FROM system.merge_tree_settings WHERE name IN {names:Array(String)}", { names: settings });
  return known.length === settings.length;
}

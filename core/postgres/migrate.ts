/**
 * Postgres schema migrations: core/postgres/migrations/NNN_*.sql, recorded in schema_migrations.
 * All pending migrations run in one transaction under a transaction-scoped advisory lock, so several
 * processes starting at once apply each migration exactly once (the others wait, then find it done), and
 * a failing migration leaves the schema as it was.
 */
import { fileURLToPath } from "node:url";
import type { Sql } from "../ports/sql.js";
import { readMigrationFiles } from "./migration-files.js";

const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations/", import.meta.url));
/** Arbitrary but fixed advisory lock key for Runwatch migrations ("rwmigrat" as hex-ish). */
const MIGRATION_LOCK_KEY = 7_243_021_951;

export async function migratePostgres(sql: Sql, dir: string = MIGRATIONS_DIR): Promise<number[]> {
  const files = await readMigrationFiles(dir);
  return sql.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await tx.query<{ version: number }>("SELECT version FROM schema_migrations")).map((r) => r.version));
    const applied: number[] = [];
    for (const m of files) {
      if (done.has(m.version)) continue;
      if (m.directives.length > 0) throw new Error(`${m.name}: Postgres migrations take no directives (-- @${m.directives[0]})`);
      for (const stmt of m.statements) await tx.query(stmt);
      await tx.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [m.version, m.name]);
      applied.push(m.version);
    }
    return applied;
  });
}

/** The migrations recorded as applied, in version order. */
export const appliedMigrations = (sql: Sql): Promise<{ version: number; name: string }[]> =>
  sql.query<{ version: number; name: string }>("SELECT version, name FROM schema_migrations ORDER BY version");

/**
 * Versioned migration files shared by both stores: `NNN_name.sql` in a migrations folder, applied in
 * version order and recorded in each store's schema_migrations table.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

export interface MigrationFile {
  version: number;
  name: string;
  statements: string[];
  /**
   * The file's `-- @<directive>` lines, without the prefix: conditions a store's migrator checks before it runs the
   * statements (core/clickhouse/migrate.ts). A migrator refuses a directive it does not know.
   */
  directives: string[];
}

export async function readMigrationFiles(dir: string): Promise<MigrationFile[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f)).sort();
  const out: MigrationFile[] = [];
  for (const f of files) {
    const version = Number(f.slice(0, 3));
    if (out.some((m) => m.version === version)) throw new Error(`duplicate migration version ${version} in ${dir}`);
    const script = await readFile(path.join(dir, f), "utf8");
    out.push({ version, name: f.replace(/\.sql$/, ""), statements: splitStatements(script), directives: directivesOf(script) });
  }
  return out;
}

/**
 * Splits a script into statements at a `;` that ends a line. Line comments are dropped. Migrations keep
 * to this shape (no `;` at a line end inside a string or a function body), which keeps the splitter small.
 */
export function splitStatements(script: string): string[] {
  const withoutComments = script
    .split("\n")
    .map((line) => (line.trimStart().startsWith("--") ? "" : line))
    .join("\n");
  return withoutComments
    .split(/;[ \t]*(?:\n|$)/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The `-- @<directive>` lines of a script, trimmed, without the `-- @`. */
export function directivesOf(script: string): string[] {
  return script
    .split("\n")
    .map((line) => /^\s*--\s*@(.+)$/.exec(line)?.[1]?.trim())
    .filter((d): d is string => d !== undefined && d !== "");
}

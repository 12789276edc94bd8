/**
 * The embedded Postgres transport: PGlite (Postgres compiled to WASM) on a data directory, so data
 * survives a restart. One connection serves the process; PGlite queues queries, and a transaction holds
 * that connection exclusively until it ends. Only one process may open a data directory at a time.
 */
import { spawn } from "node:child_process";
import { access, mkdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite, types } from "@electric-sql/pglite";
import { runHere, type Sql } from "../ports/sql.js";
import { INT8_ARRAY_OID, INT8_OID, parseInt8, transactionSql, type QueryFn } from "./sql-common.js";

/**
 * Postgres's default 128 MB of shared buffers sit in PGlite's WASM heap and are all touched at start: 150 MB of
 * resident memory for tables of users, keys, settings and alert rules that fit in a few megabytes.
 */
const START_PARAMS = [...PGlite.defaultStartParams, "-c", "shared_buffers=16MB"];

export async function openPglite(dir: string): Promise<Sql> {
  await mkdir(dir, { recursive: true });
  if (!(await exists(path.join(dir, "PG_VERSION")))) await initInChildProcess(dir);
  const db = new PGlite(dir, {
    startParams: START_PARAMS,
    parsers: {
      [INT8_OID]: parseInt8,
      [INT8_ARRAY_OID]: (v: string) => types.arrayParser(v, parseInt8, INT8_ARRAY_OID),
    },
  });
  await db.waitReady;
  const queryOn = (conn: Pick<PGlite, "query">): QueryFn =>
    async <T>(sql: string, params?: readonly unknown[]) =>
      (await conn.query<T>(sql, params ? [...params] : undefined)).rows;
  const sql: Sql = {
    query: queryOn(db),
    transaction: (fn) => db.transaction((tx) => fn(transactionSql(queryOn(tx)))),
    run: runHere(() => sql),
    close: () => db.close(),
  };
  return sql;
}

const exists = (file: string) => access(file).then(() => true, () => false);

async function initInChildProcess(dir: string): Promise<void> {
  const script = fileURLToPath(new URL("./pglite-init.mjs", import.meta.url));
  const child = spawn(process.execPath, [script, dir], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", resolve);
  });
  if (code !== 0) throw new Error(`cannot create the Postgres data directory ${dir} (PGlite initdb exited with ${code}): ${stderr.trim()}`);
}

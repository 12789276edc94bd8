/**
 * The embedded Postgres transport: PGlite (Postgres compiled to WASM) on a data directory, so data
 * survives a restart. One connection serves the process; PGlite queues queries, and a transaction holds
 * that connection exclusively until it ends. Only one process may open a data directory at a time.
 */
import { mkdir } from "node:fs/promises";
import { PGlite, types } from "@electric-sql/pglite";
import { runHere, type Sql } from "../ports/sql.js";
import { INT8_ARRAY_OID, INT8_OID, parseInt8, transactionSql, type QueryFn } from "./sql-common.js";

export async function openPglite(dir: string): Promise<Sql> {
  await mkdir(dir, { recursive: true });
  const db = new PGlite(dir, {
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

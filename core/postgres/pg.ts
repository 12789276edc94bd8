/**
 * The server Postgres transport: a pg Pool. Same SQL and result types as PGlite (see sql-common.ts).
 */
import pg from "pg";
import { runHere, type Sql } from "../ports/sql.js";
import { createLogger } from "../logger.js";
import { INT8_ARRAY_OID, INT8_OID, parseInt8, transactionSql, type QueryFn } from "./sql-common.js";

const log = createLogger().child({ component: "postgres" });

const getBuiltinParser = pg.types.getTypeParser as (oid: number, format: "text" | "binary") => (v: string) => unknown;

// Per-pool type parsers (not pg.types.setTypeParser, which would change every pg user in the process).
const typeParsers = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8_OID) return parseInt8;
    if (oid === INT8_ARRAY_OID) {
      const parseArray = getBuiltinParser(INT8_ARRAY_OID, "text") as (v: string) => (string | number | null)[];
      return (v: string) => parseArray(v).map((x) => (x === null ? null : parseInt8(String(x))));
    }
    return getBuiltinParser(oid, format ?? "text");
  },
} as pg.CustomTypesConfig;

export async function openPg(url: string, opts: { max?: number } = {}): Promise<Sql> {
  const pool = new pg.Pool({ connectionString: url, max: opts.max ?? 10, types: typeParsers });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on("error", (err) => log.warn("idle postgres client error", { err }));
  // Fail at start, not on the first request, when the server is unreachable.
  (await pool.connect()).release();
  const queryOn = (conn: pg.Pool | pg.PoolClient): QueryFn =>
    async <T>(sql: string, params?: readonly unknown[]) =>
      (await conn.query(sql, params ? [...params] : undefined)).rows as T[];
  const sql: Sql = {
    query: queryOn(pool),
    run: runHere(() => sql),
    async transaction(fn) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query("BEGIN");
        try {
          const result = await fn(transactionSql(queryOn(client)));
          await client.query("COMMIT");
          return result;
        } catch (e) {
          await client.query("ROLLBACK").catch((re: Error) => { broken = re; });
          throw e;
        }
      } finally {
        // A client whose ROLLBACK failed is in an unknown state: destroy it instead of reusing it.
        client.release(broken);
      }
    },
    close: () => pool.end(),
  };
  return sql;
}

/**
 * What the PGlite and pg adapters share: how int8 values are decoded and how nested transactions work.
 */
import { runHere, type Sql } from "../ports/sql.js";

/**
 * int8 (bigint: ids, counters, count(*)) as a JS number when it fits exactly, otherwise the decimal string
 * (never a lossy number, never a BigInt that JSON.stringify cannot encode). Both adapters install this, so
 * the same query returns the same JS values on PGlite and on a server. numeric stays a string on both.
 */
export function parseInt8(text: string): number | string {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : text;
}

export const INT8_OID = 20;
export const INT8_ARRAY_OID = 1016;

export type QueryFn = <T = Record<string, unknown>>(sql: string, params?: readonly unknown[]) => Promise<T[]>;

/**
 * The Sql handed to a transaction callback. A nested transaction() is a SAVEPOINT, so an inner failure
 * rolls back only the inner work (and the error still propagates unless the caller catches it).
 */
export function transactionSql(query: QueryFn, depth = 1): Sql {
  const sql: Sql = {
    query,
    run: runHere(() => sql),
    async transaction<R>(fn: (tx: Sql) => Promise<R>): Promise<R> {
      const sp = `runwatch_sp_${depth}`;
      await query(`SAVEPOINT ${sp}`);
      try {
        const result = await fn(transactionSql(query, depth + 1));
        await query(`RELEASE SAVEPOINT ${sp}`);
        return result;
      } catch (e) {
        await query(`ROLLBACK TO SAVEPOINT ${sp}`);
        throw e;
      }
    },
    close: () => Promise.reject(new Error("close() is not available inside a transaction")),
  };
  return sql;
}

/**
 * The ClickHouse transport: chDB in-process (embedded) or a ClickHouse server over HTTP (@clickhouse/client).
 * All SQL lives in core/clickhouse/ and is shared by both; adapters differ only in transport.
 * Parameters use ClickHouse's server-side binding syntax, e.g. `WHERE user_id = {user_id:UInt64}`.
 */
export interface ClickHouse {
  /** A SELECT; rows decoded from JSONEachRow (64-bit integers arrive as strings unless cast). */
  query<T = Record<string, unknown>>(sql: string, params?: Record<string, unknown>): Promise<T[]>;
  /** DDL or any statement without a result. */
  exec(sql: string, params?: Record<string, unknown>): Promise<void>;
  /** Batched insert as JSONEachRow. */
  insert(table: string, rows: readonly Record<string, unknown>[]): Promise<void>;
  /** Batched insert of rows already serialised as JSONEachRow (one JSON object per line). */
  insertEncoded(table: string, jsonEachRow: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

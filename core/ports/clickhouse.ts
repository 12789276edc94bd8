/**
 * The ClickHouse transport: chDB in-process (embedded) or a ClickHouse server over HTTP (@clickhouse/client).
 * All SQL lives in core/clickhouse/ and is shared by both; adapters differ only in transport.
 * Parameters use ClickHouse's server-side binding syntax, e.g. `WHERE user_id = {user_id:UInt64}`.
 */
/**
 * Rows serialised for an insert as JSONCompactEachRow: one JSON array of values per line, in the order of `columns`
 * (a null in a column that is not Nullable takes the column's default). Without a key per value, and parsed on the
 * inserting thread, the engine parses them in less CPU than JSONEachRow cost it (docs/BENCHMARKS.md, "ClickHouse
 * calls").
 */
export interface EncodedRows {
  readonly columns: readonly string[];
  readonly bytes: Uint8Array;
}

export interface ClickHouse {
  /** A SELECT; rows decoded from JSONEachRow (64-bit integers arrive as strings unless cast). */
  query<T = Record<string, unknown>>(sql: string, params?: Record<string, unknown>): Promise<T[]>;
  /** DDL or any statement without a result. */
  exec(sql: string, params?: Record<string, unknown>): Promise<void>;
  /** Batched insert of rows given as objects (a column a row leaves out takes its default). */
  insert(table: string, rows: readonly Record<string, unknown>[]): Promise<void>;
  /** Batched insert of rows already serialised (EncodedRows). */
  insertEncoded(table: string, rows: EncodedRows): Promise<void>;
  close(): Promise<void>;
}

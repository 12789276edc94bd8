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
  /**
   * The connection for SQL a project's members write (query/), opened on first use: apart from the connections that
   * serve the app, so a 30-second query there holds none of the dashboard's reads.
   */
  sandbox(): ClickHouseSandbox;
  close(): Promise<void>;
}

/** A column of a sandbox answer, as the engine typed it. */
export interface SandboxColumn {
  readonly name: string;
  readonly type: string;
}

/** A SELECT's answer in the sandbox: its columns, then its rows as arrays of values in column order. */
export interface SandboxAnswer {
  readonly columns: readonly SandboxColumn[];
  readonly rows: readonly (readonly unknown[])[];
}

/**
 * Connections whose current database is an empty one (`SANDBOX_DATABASE`), for SQL the app did not write: a table
 * name the caller's SQL does not define (as a CTE) finds nothing there, rather than one of the app's tables. The SQL
 * carries its own SETTINGS (readonly, the limits): a connection adds only the wire format. An engine error keeps the
 * engine's code: `code` (a number as a string) on the server's errors, "Code: N." opening the message on chDB's.
 */
export interface ClickHouseSandbox {
  /** The app's database: the caller's own SQL names its tables with it (`<database>.agent_runs`). */
  readonly database: string;
  /** One SELECT (or EXPLAIN), answered as JSONCompact. */
  select(sql: string): Promise<SandboxAnswer>;
}

/** The empty database a sandbox connection uses. */
export const sandboxDatabaseOf = (database: string): string => `${database}_sandbox`;

/**
 * The Postgres transport: PGlite (WASM Postgres, embedded) or a PostgreSQL server (pg pool).
 * Same SQL and migrations on both; `$1`-style parameters.
 */
export interface Sql {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** Runs fn in one transaction (BEGIN/COMMIT, ROLLBACK on throw). */
  transaction<R>(fn: (tx: Sql) => Promise<R>): Promise<R>;
  close(): Promise<void>;
}

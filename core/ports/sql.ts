/**
 * The Postgres transport: PGlite (WASM Postgres, embedded) or a PostgreSQL server (pg pool).
 * Same SQL and migrations on both; `$1`-style parameters.
 */
/** The largest value of Postgres's `integer` (versions, counters): a bigger number must be refused before a query. */
export const MAX_POSTGRES_INTEGER = 2_147_483_647;

export interface Sql {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** Runs fn in one transaction (BEGIN/COMMIT, ROLLBACK on throw). Not available across threads: use run(). */
  transaction<R>(fn: (tx: Sql) => Promise<R>): Promise<R>;
  /**
   * Runs a procedure where the connection lives: here for an in-process adapter, on the host thread in one call
   * for the pipeline thread's Sql (pipeline/thread). Work that needs a transaction is written as a procedure,
   * so no transaction is held open across round trips between threads while everything else waits for it.
   */
  run<A, R>(procedure: SqlProcedure<A, R>, args: A): Promise<R>;
  close(): Promise<void>;
}

/**
 * A named unit of SQL work (usually one transaction) whose arguments and result are plain data, so it can be
 * run on the thread that owns the connection. Define it once with defineProcedure and list it where the host
 * looks procedures up by name (pipeline/thread/procedures.ts; a custom plugin module exports `procedures`).
 */
export interface SqlProcedure<A, R> {
  readonly name: string;
  readonly body: (sql: Sql, args: A) => Promise<R>;
}

export const defineProcedure = <A, R>(name: string, body: (sql: Sql, args: A) => Promise<R>): SqlProcedure<A, R> => ({ name, body });

/** run() for an adapter that holds its connection: the procedure runs right here. */
export const runHere =
  (sql: () => Sql) =>
  <A, R>(procedure: SqlProcedure<A, R>, args: A): Promise<R> =>
    procedure.body(sql(), args);

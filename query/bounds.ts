/**
 * The bounds every member's query runs under, written by the server as the SETTINGS of the query it runs (a member's
 * own SETTINGS clause is refused: query/check.ts), so no query can lift them (docs/QUERY.md, "Bounds").
 */

export const DEFAULT_MAX_ROWS = 1_000;
export const MAX_ROWS = 10_000;
export const MAX_EXECUTION_SECONDS = 30;
export const MAX_RESULT_BYTES = 8 * 1024 * 1024;
export const MAX_MEMORY_BYTES = 512 * 1024 * 1024;
/** Rows a query may read from the tables (all its reads together). */
export const MAX_ROWS_TO_READ = 500_000_000;
/** Rows a join or an IN may hold in memory. */
export const MAX_ROWS_IN_JOIN = 5_000_000;
/** The message of the query's own stop at MAX_RESULT_BYTES (query/run.ts). */
export const OVER_BYTES = "ANSWER_OVER_BYTE_BOUND";
/** Longest SQL accepted (characters). */
export const MAX_SQL_CHARS = 64 * 1024;

/**
 * readonly = 2: reads only, and no query may lift readonly; 2 rather than 1 because 1 also forbids the SETTINGS below
 * on a connection whose client sends its own (the server's HTTP client does). One thread per query: a member's
 * query leaves the cores to the dashboard and ingest.
 */
export const BOUNDS_SETTINGS = [
  "readonly = 2",
  `max_execution_time = ${MAX_EXECUTION_SECONDS}`,
  "timeout_overflow_mode = 'throw'",
  `max_result_bytes = ${MAX_RESULT_BYTES}`,
  "result_overflow_mode = 'throw'",
  `max_memory_usage = ${MAX_MEMORY_BYTES}`,
  `max_rows_to_read = ${MAX_ROWS_TO_READ}`,
  "read_overflow_mode = 'throw'",
  `max_rows_in_join = ${MAX_ROWS_IN_JOIN}`,
  "join_overflow_mode = 'throw'",
  `max_rows_in_set = ${MAX_ROWS_IN_JOIN}`,
  "set_overflow_mode = 'throw'",
  "max_threads = 1",
  "function_sleep_max_microseconds_per_block = 0",
].join(", ");

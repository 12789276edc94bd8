/**
 * Read-only SQL over one project's data, safe by construction (docs/QUERY.md):
 *   run.ts            runProjectQuery: canonical text, params, the check, the run under the project's CTEs
 *   check.ts, ast.ts  the engine's syntax tree of a query, and what it may hold
 *   functions.ts      the functions a query may call (an allow-list from system.functions)
 *   params.ts         params checked and written in as typed literals
 *   bounds.ts         rows, bytes, time, memory: the SETTINGS every query runs with
 *   engine-errors.ts  engine errors as QueryRefused / QueryLimitHit, cleaned of internals
 *   lanes.ts          one query at a time per project, a few at once in all
 * The tables' SQL is in stores/query/tables.ts.
 */
import { QUERY_TABLE_DEFS, type QueryColumnDoc } from "../stores/query/tables.js";

export { runProjectQuery } from "./run.js";
export { QueryLimitHit, QueryRefused, type QueryColumn, type QueryRequest, type QueryResult } from "./types.js";
export { DEFAULT_MAX_ROWS, MAX_ROWS, MAX_SQL_CHARS } from "./bounds.js";

export interface QueryTableDoc {
  readonly name: string;
  readonly description: string;
  readonly columns: readonly QueryColumnDoc[];
}

/** The documented tables; docs/QUERY.md and the schema endpoint come from it. */
export const QUERY_TABLES: readonly QueryTableDoc[] = QUERY_TABLE_DEFS.map(({ name, description, columns }) => ({ name, description, columns }));

/** What a member's SQL query asks, what it answers, and the two ways it is turned down (docs/QUERY.md). */
import { Data } from "effect";
import type { SandboxAnswer, SandboxColumn } from "../core/ports/clickhouse.js";

export interface QueryRequest {
  readonly projectId: number;
  readonly sql: string;
  readonly params?: Readonly<Record<string, unknown>>;
  readonly maxRows?: number;
}

/** A column of the answer, as the engine typed it (`UInt64`, `Nullable(Float64)`, `DateTime64(3, 'UTC')`). */
export type QueryColumn = SandboxColumn;

/** The sandbox's answer (its columns, then its rows as arrays in column order), and how much of it this is. */
export interface QueryResult extends SandboxAnswer {
  /** True when the answer holds only the first `max_rows` rows of more. */
  readonly truncated: boolean;
  readonly limit: "rows" | "bytes" | null;
  readonly elapsed_ms: number;
}

/** A query refused before it ran (parse error, a table/function/clause outside the sandbox, a bad param): field names "sql" | "params" | "max_rows". */
export class QueryRefused extends Data.TaggedError("QueryRefused")<{ readonly field: string; readonly message: string }> {}

/** A bound hit while running: which one, in words a person or a model can act on. */
export class QueryLimitHit extends Data.TaggedError("QueryLimitHit")<{ readonly limit: "rows" | "bytes" | "time" | "memory"; readonly message: string }> {}

/** What a member's SQL query asks, what it answers, and the two ways it is turned down (docs/QUERY.md). */
import { Data } from "effect";

export interface QueryRequest {
  readonly projectId: number;
  readonly sql: string;
  readonly params?: Readonly<Record<string, unknown>>;
  readonly maxRows?: number;
}

export interface QueryColumn {
  readonly name: string;
  readonly type: string;
}

export interface QueryResult {
  readonly columns: readonly QueryColumn[];
  readonly rows: readonly (readonly unknown[])[];
  /** True when the answer holds only the first `max_rows` rows of more. */
  readonly truncated: boolean;
  readonly limit: "rows" | "bytes" | null;
  readonly elapsed_ms: number;
}

/** A query refused before it ran (parse error, a table/function/clause outside the sandbox, a bad param): field names "sql" | "params" | "max_rows". */
export class QueryRefused extends Data.TaggedError("QueryRefused")<{ readonly field: string; readonly message: string }> {}

/** A bound hit while running: which one, in words a person or a model can act on. */
export class QueryLimitHit extends Data.TaggedError("QueryLimitHit")<{ readonly limit: "rows" | "bytes" | "time" | "memory"; readonly message: string }> {}

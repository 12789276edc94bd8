/** The query API's part of the OpenAPI document (query-api.ts; docs/QUERY.md). */
import { Schema } from "effect";
import { DEFAULT_MAX_ROWS, MAX_ROWS, MAX_SQL_CHARS } from "../../query/index.js";
import type { Operations } from "../api/openapi/document.js";

const Column = Schema.Struct({ name: Schema.String, type: Schema.String.annotations({ description: "The engine's type, e.g. UInt64, Nullable(DateTime64(3, 'UTC'))." }) });

export const QueryBody = Schema.Struct({
  sql: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_SQL_CHARS)).annotations({ description: "One SELECT over the tables of GET /api/query/schema; `{name:Type}` placeholders take `params`." }),
  params: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Array(Schema.Union(Schema.String, Schema.Number, Schema.Boolean))) }))
    .annotations({ description: "A value for each `{name:Type}` placeholder of `sql` (and none other)." }),
  max_rows: Schema.optional(Schema.Int.pipe(Schema.between(1, MAX_ROWS))).annotations({ description: `Rows to answer at most; default ${DEFAULT_MAX_ROWS}.` }),
}).annotations({ identifier: "QueryRequest" });

const QueryAnswer = Schema.Struct({
  columns: Schema.Array(Column),
  rows: Schema.Array(Schema.Array(Schema.Unknown)).annotations({ description: "Values in column order; 64-bit integers as strings, times as ISO 8601." }),
  truncated: Schema.Boolean.annotations({ description: "true: the query had more rows than max_rows; these are the first." }),
  limit: Schema.NullOr(Schema.Literal("rows", "bytes")).annotations({ description: "The bound that cut the answer; null when it is whole." }),
  elapsed_ms: Schema.Number,
}).annotations({ identifier: "QueryAnswer" });

const QueryError = Schema.Struct({
  error: Schema.Struct({
    code: Schema.String.annotations({ description: "query_refused: refused before it ran (see field); query_limit: a bound hit while it ran (see limit); else the API's usual codes." }),
    message: Schema.String,
    field: Schema.optional(Schema.Literal("sql", "params", "max_rows")),
    limit: Schema.optional(Schema.Literal("time", "memory", "bytes", "rows")),
  }),
}).annotations({ identifier: "QueryError" });

const TableDoc = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  columns: Schema.Array(Schema.Struct({ name: Schema.String, type: Schema.String, description: Schema.String })),
}).annotations({ identifier: "QueryTable" });

export const QUERY_OPERATIONS: Operations = {
  "/api/query": {
    post: {
      tag: "Query", summary: "Run a read-only SQL query over the project's data",
      description: "Sees only the project's rows of the documented tables; bounded in rows, bytes, time and memory (docs/QUERY.md).",
      body: QueryBody, ok: { 200: QueryAnswer }, errors: [400, 401, 403, 413, 415, 422, 429], errorBody: QueryError,
    },
  },
  "/api/query/schema": {
    get: { tag: "Query", summary: "The tables and columns a query may read", ok: { 200: Schema.Struct({ tables: Schema.Array(TableDoc) }) }, errors: [401, 403, 429] },
  },
};

/** The trace API's part of the OpenAPI document (trace-api.ts; docs/API.md, "Trace"). */
import { Schema } from "effect";
import { MAX_SPAN_ID_CHARS, SPAN_KINDS } from "../../core/events/schema.js";
import type { Operations } from "../api/openapi/document.js";
import { After, Limit, q, SdkRunId } from "../api/openapi/operation.js";
import * as R from "../api/openapi/schemas.js";
import { LogLine } from "../otlp/logs-openapi.js";
import { MAX_SEARCH_CHARS, MAX_SEARCH_LIMIT, DEFAULT_SEARCH_LIMIT, DEFAULT_TREE_PAGE, MAX_TREE_PAGE } from "./trace-reads.js";

const Iso = Schema.String.annotations({ format: "date-time" });
const Count = Schema.Number.pipe(Schema.nonNegative());
const Cursor = Schema.String.annotations({ description: "The newest span event read (an event id): pass as `since` (with `n`) for what changed after it, or as `at` for the next pages of the same read." });
const N = Schema.Int.pipe(Schema.nonNegative()).annotations({ description: "How many span events the read counted up to `cursor`: pass with `since`." });

export const SpanSkeleton = Schema.Struct({
  span_id: Schema.String,
  parent_span_id: Schema.NullOr(Schema.String).annotations({ description: "As sent. A span whose parent the run does not have (or in a parent loop) is listed as a root." }),
  depth: Schema.optional(Schema.Int.pipe(Schema.nonNegative())).annotations({ description: "0 for a root; absent in changes (find the place from parent_span_id)." }),
  name: Schema.String,
  kind: Schema.Literal(...SPAN_KINDS, "tool"),
  status: Schema.Literal("ok", "error", "running"),
  started_at: Iso,
  duration_ms: Schema.NullOr(Count),
  model: Schema.NullOr(Schema.String).annotations({ description: "An LLM call's model; null for other spans." }),
  tokens: Schema.NullOr(Count).annotations({ description: "An LLM call's prompt + completion tokens; null for other spans." }),
  cost_usd: Schema.NullOr(Count).annotations({ description: "An LLM call's cost; null for other spans." }),
  scores: Schema.optional(Schema.Array(Schema.Struct({ name: Schema.String, value: Schema.Union(Schema.Number, Schema.Boolean, Schema.String) })))
    .annotations({ description: "The latest value of each score given to the span." }),
}).annotations({ identifier: "SpanSkeleton", description: "A span without its payloads: what a trace's row shows." });

const TreePage = Schema.Struct({
  run: R.Run,
  cursor: Cursor,
  n: N,
  total: Count.annotations({ description: "Spans in the run." }),
  range: Schema.Struct({ started_at: Schema.NullOr(Iso), ended_at: Schema.NullOr(Iso) }).annotations({ description: "The earliest start and latest end of the run's spans." }),
  spans: Schema.Array(SpanSkeleton).annotations({ description: "In tree order: each span followed by its subtree, siblings in start order." }),
  next_after: Schema.NullOr(Schema.String).annotations({ description: "Pass as `after` (with `at`) for the next page; null on the last." }),
}).annotations({ identifier: "TraceTreePage" });

const TreeChanges = Schema.Struct({
  run: R.Run,
  reset: Schema.Boolean.annotations({ description: "true: the run's events up to `since` are not those the reader saw (one was stored late): read the tree again from its first page." }),
  cursor: Cursor,
  n: N,
  spans: Schema.Array(SpanSkeleton).annotations({ description: "The spans with an event after `since`, whole, in start order." }),
}).annotations({ identifier: "TraceTreeChanges" });

const SpanLink = Schema.Struct({
  trace_id: Schema.String,
  span_id: Schema.String,
  attributes: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  run: Schema.NullOr(Schema.String).annotations({ description: "The linked trace's run (its sdk_run_id) when it is a run of this project; null otherwise." }),
  agent_name: Schema.NullOr(Schema.String).annotations({ description: "That run's agent (\"\" when none); null when `run` is." }),
}).annotations({ identifier: "SpanLink", description: "A link to a span of another trace (a handoff, a batch, a retry)." });

const SpanDetail = Schema.Struct({
  run: R.Run,
  span: R.Span,
  input: Schema.Unknown.annotations({ description: "The start event's input (a tool call's input_preview), whole; null when none." }),
  output: Schema.Unknown.annotations({ description: "The end event's output (output_preview), whole; null when none." }),
  metadata: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({ description: "The span events' other payload fields." }),
  events: Schema.Array(R.StoredEvent).annotations({ description: "The events naming the span (its start, end, errors), payloads without input and output." }),
  scores: Schema.Array(R.Score).annotations({ description: "The span's scores, newest first (at most 100)." }),
  logs: Schema.Array(LogLine).annotations({ description: "OpenTelemetry log records of the span (docs/OTEL.md, Logs), oldest first." }),
  links: Schema.Array(SpanLink).annotations({ description: "The span's links to spans of other traces (at most 32)." }),
}).annotations({ identifier: "TraceSpan" });

const SearchResult = Schema.Struct({
  spans: Schema.Array(Schema.String).annotations({ description: "Ids of the matching spans, in processing order of their first match." }),
  run: Schema.Boolean.annotations({ description: "Whether the run's own events (start, end, errors, questions) match." }),
  more: Schema.Boolean,
}).annotations({ identifier: "TraceSearch" });

const SpanId = { name: "span_id", in: "path" as const, required: true, schema: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_SPAN_ID_CHARS)) };

export const TRACE_OPERATIONS: Operations = {
  "/api/runs/{sdk_run_id}/tree": {
    get: {
      tag: "Runs", summary: "A run's spans without payloads, a page at a time in tree order, or what changed since a cursor",
      description: "Pages: `limit` and `after` (the previous page's next_after), with `at` (the first page's cursor) so that later pages come from the same read. Changes: `since` and `n` (an earlier answer's cursor and n).",
      params: [SdkRunId, q("limit", Limit(MAX_TREE_PAGE, DEFAULT_TREE_PAGE)), After, q("at", Schema.String, "The first page's `cursor`."),
        q("since", Schema.String, "An earlier answer's `cursor`: answer the spans changed after it."), q("n", Schema.Int.pipe(Schema.nonNegative()), "The `n` of the same answer as `since`.")],
      ok: { 200: Schema.Union(TreePage, TreeChanges) }, errors: [401, 403, 404, 422, 429],
    },
  },
  "/api/runs/{sdk_run_id}/spans/{span_id}": {
    get: { tag: "Runs", summary: "One span whole: its input, output, metadata, events and scores", params: [SdkRunId, SpanId], ok: { 200: SpanDetail }, errors: [401, 403, 404, 422, 429] },
  },
  "/api/runs/{sdk_run_id}/search": {
    get: {
      tag: "Runs", summary: "The spans of a run whose payloads hold a text (case-insensitive)",
      params: [SdkRunId, { ...q("q", Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_SEARCH_CHARS)), "The text."), required: true }, q("limit", Limit(MAX_SEARCH_LIMIT, DEFAULT_SEARCH_LIMIT))],
      ok: { 200: SearchResult }, errors: [401, 403, 404, 422, 429],
    },
  },
};

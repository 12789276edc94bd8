/** The runs explorer's part of the OpenAPI document: saved views, charts, filter values and export. */
import { Schema } from "effect";
import { MAX_FILTER_CHARS } from "../../core/runs-filter/index.js";
import { MAX_FILTER_VALUES, VALUE_FIELDS } from "../../stores/runs/filter-values.js";
import { BUCKET_SECONDS } from "../../stores/runs/run-charts.js";
import { RUN_COLUMNS, SavedViewInput } from "../../stores/saved-views.js";
import type { Operations } from "../api/openapi/document.js";
import { Limit, q } from "../api/openapi/operation.js";
import { MAX_EXPORT_RUNS } from "./runs-export.js";

const Iso = Schema.String.annotations({ format: "date-time" });
const Q = q("q", Schema.String.pipe(Schema.maxLength(MAX_FILTER_CHARS)), "The runs filter's string form (docs/EXPLORER.md), e.g. `status:error agent:refund since:24h`.");
const Sort = q("sort", Schema.String, "start_time (default), duration, cost, tokens or score.<name>.");
const Order = q("order", Schema.Literal("asc", "desc"), "Default desc.");
const NullableMs = Schema.NullOr(Schema.Number);

const SavedView = Schema.Struct({
  id: Schema.String.annotations({ format: "uuid" }),
  name: Schema.String,
  filter: Schema.String.annotations({ description: "The filter's canonical string form." }),
  columns: Schema.Array(Schema.Literal(...RUN_COLUMNS)),
  sort: Schema.String,
  order: Schema.Literal("asc", "desc"),
  created_by: Schema.NullOr(Schema.Number),
  created_at: Iso,
}).annotations({ identifier: "SavedView" });

const RunsChart = Schema.Struct({
  range: Schema.Struct({ from: Iso, to: Iso, bucket_seconds: Schema.Literal(...BUCKET_SECONDS) }),
  buckets: Schema.Array(Schema.Struct({
    at: Iso,
    runs: Schema.Number, errors: Schema.Number, error_rate: Schema.NullOr(Schema.Number),
    p50_ms: NullableMs, p95_ms: NullableMs, p99_ms: NullableMs,
    tokens: Schema.Number, cost_usd: Schema.Number,
    scores: Schema.Record({ key: Schema.String, value: Schema.Number }),
  })),
  scores: Schema.Array(Schema.String),
  activations: Schema.Array(Schema.Struct({ agent: Schema.String, version: Schema.Number, at: Iso })),
}).annotations({ identifier: "RunsChart", description: "The filter's runs bucketed by start time, with config activations in the range." });

export const EXPLORER_OPERATIONS: Operations = {
  "/api/views": {
    get: { tag: "Views", summary: "The project's saved views of the runs list, by name", ok: { 200: Schema.Struct({ views: Schema.Array(SavedView) }).annotations({ identifier: "SavedViewList" }) }, errors: [401, 403, 405, 429] },
    post: {
      tag: "Views", summary: "Save a view (a name, a filter, columns and an order)", body: SavedViewInput,
      description: "At most 200 views a project; a name is unique in its project (409 view_exists). The filter is kept in its canonical form.",
      ok: { 201: Schema.Struct({ view: SavedView }).annotations({ identifier: "SavedViewCreated" }) }, errors: [400, 401, 403, 405, 409, 413, 415, 422, 429],
    },
  },
  "/api/views/{id}": {
    delete: { tag: "Views", summary: "Delete a saved view", params: [{ name: "id", in: "path", required: true, schema: Schema.String }], ok: { 204: null }, errors: [401, 403, 404, 405, 429] },
  },
  "/api/runs/chart": {
    get: {
      tag: "Runs", summary: "The filter's runs over time: runs, error rate, latency p50/p95/p99, tokens, cost, score means",
      description: "The range is the filter's own time (from/to, or since), else the last 24 hours; the bucket size follows from it (at most 120 buckets).",
      params: [Q], ok: { 200: RunsChart }, errors: [401, 403, 422, 429],
    },
  },
  "/api/runs/filter-values": {
    get: {
      tag: "Runs", summary: "Values seen in the project for the filter bar's completion",
      params: [
        { name: "field", in: "query", required: true, schema: Schema.String, description: `${VALUE_FIELDS.join(", ")} or meta.<key> (that key's values).` },
        q("prefix", Schema.String.pipe(Schema.maxLength(200)), "Values starting with it (any case)."),
        q("limit", Limit(MAX_FILTER_VALUES, MAX_FILTER_VALUES)),
      ],
      ok: { 200: Schema.Struct({ field: Schema.String, values: Schema.Array(Schema.String) }).annotations({ identifier: "FilterValues" }) }, errors: [401, 403, 422, 429],
    },
  },
  "/api/runs/export": {
    get: {
      tag: "Runs", summary: "Export the filter's runs as CSV or JSON Lines, streamed",
      description: `At most ${MAX_EXPORT_RUNS.toLocaleString("en")} runs (10,000 with spans, JSON Lines only). X-Runwatch-Export-Matched says how many matched when it started ` +
        "and X-Runwatch-Export-Truncated whether the file stops at the limit.",
      params: [Q, Sort, Order, q("format", Schema.Literal("csv", "jsonl"), "Default csv."), q("spans", Schema.Literal("0", "1"), "1: each run's spans (jsonl only)."), q("limit", Limit(MAX_EXPORT_RUNS, MAX_EXPORT_RUNS))],
      ok: { 200: null }, okTypes: ["text/csv", "application/x-ndjson"], errors: [401, 403, 422, 429],
    },
  },
};

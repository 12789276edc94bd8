/** The log reads' part of the OpenAPI document (logs-api.ts; docs/OTEL.md, Logs). */
import { Schema } from "effect";
import type { Operations } from "../api/openapi/document.js";
import { Cursor, Limit, q, SdkRunId } from "../api/openapi/operation.js";
import { DEFAULT_LOG_PAGE, MAX_LOG_PAGE, MAX_LOG_QUERY_CHARS } from "./logs-api.js";

export const LogLine = Schema.Struct({
  log_id: Schema.String,
  time: Schema.String.annotations({ format: "date-time" }),
  trace_id: Schema.NullOr(Schema.String),
  span_id: Schema.NullOr(Schema.String).annotations({ description: "The span the record is an event of; null for a run's or project's log line." }),
  severity_number: Schema.Int,
  severity_text: Schema.String,
  event_name: Schema.NullOr(Schema.String).annotations({ description: "The record's event name (gen_ai.user.message, gen_ai.evaluation.result, …); null for a plain log line." }),
  body: Schema.Unknown.annotations({ description: "Text as sent, or the structured body (cut to 16 KiB)." }),
  attributes: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  service_name: Schema.String,
  scope: Schema.String,
}).annotations({ identifier: "LogLine", description: "An OpenTelemetry log record." });

const LogPage = Schema.Struct({
  logs: Schema.Array(LogLine),
  next_cursor: Schema.NullOr(Schema.String).annotations({ description: "Pass as `cursor` for the next page; null on the last." }),
}).annotations({ identifier: "LogPage" });

const Query = q("q", Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_LOG_QUERY_CHARS)), "Only records whose body or event name holds this text (case-insensitive).");
const Cursor_ = Cursor;

export const LOGS_OPERATIONS: Operations = {
  "/api/runs/{sdk_run_id}/logs": {
    get: {
      tag: "Runs", summary: "The OpenTelemetry log records of a run's trace, oldest first",
      params: [SdkRunId, q("limit", Limit(MAX_LOG_PAGE, DEFAULT_LOG_PAGE)), Cursor_, Query],
      // 404: an empty run id (`/api/runs//logs`) matches no route; a run without records is an empty page.
      ok: { 200: LogPage }, errors: [401, 403, 404, 422, 429],
    },
  },
  "/api/logs": {
    get: {
      tag: "Runs", summary: "The project's OpenTelemetry log records, newest first",
      params: [q("limit", Limit(MAX_LOG_PAGE, DEFAULT_LOG_PAGE)), Cursor_, Query, q("trace_id", Schema.String, "Only this trace's records.")],
      ok: { 200: LogPage }, errors: [401, 403, 422, 429],
    },
  },
};

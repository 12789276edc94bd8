/** Ingest's part of the OpenAPI document: the event API (routes.ts) and OTLP/HTTP (web/otlp/http-route.ts). */
import { Schema } from "effect";
import { Envelope } from "../../core/events/schema.js";
import type { Operations } from "../api/openapi/document.js";
import * as R from "../api/openapi/schemas.js";

const Event = Envelope.annotations({ identifier: "Event", description: "One event of a run (docs/API.md, Events)." });
const EventsBatch = Schema.Struct({ events: Schema.Array(Event).pipe(Schema.minItems(1)) }).annotations({ identifier: "EventBatch", description: "At most RUNWATCH_MAX_BATCH_EVENTS (1,000) events." });
const OtlpLogsRequest = Schema.Unknown.annotations({ identifier: "ExportLogsServiceRequest", description: "OTLP ExportLogsServiceRequest: protobuf, or OTLP/JSON; gzip allowed." });
const OtlpMetricsRequest = Schema.Unknown.annotations({ identifier: "ExportMetricsServiceRequest", description: "OTLP ExportMetricsServiceRequest: protobuf, or OTLP/JSON; gzip allowed." });
const OtlpSignalResponse = (identifier: string, rejected: string) => Schema.Struct({
  partialSuccess: Schema.optional(Schema.Struct({ [rejected]: Schema.optional(Schema.Union(Schema.String, Schema.Number)), errorMessage: Schema.optional(Schema.String) })),
}).annotations({ identifier, description: "OTLP/JSON; application/x-protobuf requests get the protobuf message." });
const OtlpRequest = Schema.Unknown.annotations({ identifier: "ExportTraceServiceRequest", description: "OTLP ExportTraceServiceRequest: protobuf, or OTLP/JSON (hex or base64 ids, int64 as strings); gzip allowed." });

export const INGEST_OPERATIONS: Operations = {
  "/api/ingest": {
    post: { tag: "Ingest", summary: "Send one event", body: Event, ok: { 202: R.Accepted }, errors: [400, 401, 403, 413, 415, 422, 429, 503] },
  },
  "/api/ingest/batch": {
    post: { tag: "Ingest", summary: "Send up to 1,000 events", description: "Each event is judged alone: the 207 lists a result per event.", body: EventsBatch, ok: { 207: R.BatchResult }, errors: [400, 401, 403, 413, 415, 422, 429, 503] },
  },
  "/v1/traces": {
    post: {
      tag: "OpenTelemetry", summary: "OTLP/HTTP trace export",
      description: "A trace becomes a run (docs/OTEL.md). Answers in the request's content type; a refusal of some spans is a 200 with partialSuccess.",
      body: OtlpRequest, bodyTypes: ["application/x-protobuf", "application/json"], ok: { 200: R.OtlpExportResponse }, errors: [400, 401, 403, 413, 415, 429, 503], errorBody: R.OtlpStatus,
    },
  },
  "/v1/logs": {
    post: {
      tag: "OpenTelemetry", summary: "OTLP/HTTP log export",
      description: "A record with a trace and span id is that span's event; with a trace id only, a line of its run; with neither, the project's (docs/OTEL.md, Logs). A refusal of some records is a 200 with partialSuccess.rejectedLogRecords.",
      body: OtlpLogsRequest, bodyTypes: ["application/x-protobuf", "application/json"], ok: { 200: OtlpSignalResponse("ExportLogsServiceResponse", "rejectedLogRecords") }, errors: [400, 401, 403, 413, 415, 429, 503], errorBody: R.OtlpStatus,
    },
  },
  "/v1/metrics": {
    post: {
      tag: "OpenTelemetry", summary: "OTLP/HTTP metric export (answered, not kept)",
      description: "Runwatch derives its metrics from spans: every data point is counted in partialSuccess.rejectedDataPoints, with the reason (docs/OTEL.md, Metrics).",
      body: OtlpMetricsRequest, bodyTypes: ["application/x-protobuf", "application/json"], ok: { 200: OtlpSignalResponse("ExportMetricsServiceResponse", "rejectedDataPoints") }, errors: [400, 401, 403, 413, 415, 429, 503], errorBody: R.OtlpStatus,
    },
  },
};

/**
 * The OpenAPI 3.1 document of the public API (GET /api/openapi.json), generated: every request and response body is
 * an effect Schema (the request ones are those the handlers decode with) turned into JSON Schema by effect's
 * JSONSchema.fromAST; this file only says which path, method, parameters and statuses use which Schema.
 */
import { JSONSchema, Schema } from "effect";
import { Envelope, EVENT_TYPES, MAX_SDK_RUN_ID_CHARS, MAX_SESSION_ID_CHARS, PayloadSchemas, RUN_STATUSES } from "../../../core/events/schema.js";
import { MAX_SCORE_NAME, ScoreInput } from "../../../stores/scores.js";
import { DATASET_OPERATIONS } from "./datasets.js";
import { EXPERIMENT_OPERATIONS } from "./experiments.js";
import { EVALUATION_OPERATIONS } from "./evaluation.js";
import { Limit, q, type Body, type Operation, type Param } from "./operation.js";
import * as R from "./schemas.js";

type Json = Record<string, unknown>;

const ERROR_TEXT: Record<number, string> = {
  400: "The body could not be read (not JSON, not protobuf).",
  401: "No API key, or one that is unknown, revoked or expired.",
  403: "`insufficient_scope`: the key's scope is `ingest`, and this route reads; `forbidden`: the role of the key's creator in its project (as it is now) does not allow this (docs/TEAMS.md).",
  404: "Not found in this key's project (another project's run or dataset is not found either).",
  409: "Conflict: no open question, a newer question, or already answered; a dataset name already taken.",
  413: "The body is over the size limit.",
  415: "Unsupported content type.",
  422: "A field is invalid: `error.field` names it.",
  429: "Rate limited: see the Retry-After header.",
  503: "Temporarily unavailable (the event log is full or unreachable): retry after Retry-After.",
};

const SdkRunId: Param = { name: "sdk_run_id", in: "path", required: true, schema: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_SDK_RUN_ID_CHARS)), description: "The run's id as the client named it." };
const Since = q("since", Schema.String.annotations({ format: "date-time" }), "ISO 8601: activity at or after it.");
const Cursor = q("cursor", Schema.String, "`next_cursor` of the previous page.");
const After = q("after", Schema.String, "`next_after` of the previous page.");

const Event = Envelope.annotations({ identifier: "Event", description: "One event of a run (docs/API.md, Events)." });
const EventsBatch = Schema.Struct({ events: Schema.Array(Event).pipe(Schema.minItems(1)) }).annotations({ identifier: "EventBatch", description: "At most RUNWATCH_MAX_BATCH_EVENTS (1,000) events." });
const OtlpRequest = Schema.Unknown.annotations({ identifier: "ExportTraceServiceRequest", description: "OTLP ExportTraceServiceRequest: protobuf, or OTLP/JSON (hex or base64 ids, int64 as strings); gzip allowed." });

const OPERATIONS: Record<string, Record<string, Operation>> = {
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
  "/api/runs": {
    get: {
      tag: "Runs", summary: "List runs, newest first",
      params: [
        q("status", Schema.Literal(...RUN_STATUSES)), q("agent_name", Schema.String), q("session_id", Schema.String), Since,
        q("config_version", Schema.Int.pipe(Schema.between(1, 2 ** 31 - 1))), q("score_name", Schema.String.pipe(Schema.maxLength(MAX_SCORE_NAME)), "Runs with a score of this name."),
        q("score_min", Schema.Number, "With score_name: numeric or boolean (1/0) scores at least this."), q("score_max", Schema.Number, "With score_name: at most this."),
        Cursor, q("limit", Limit(500, 50)),
      ],
      ok: { 200: R.RunList }, errors: [401, 403, 422, 429],
    },
  },
  "/api/runs/{sdk_run_id}": {
    get: { tag: "Runs", summary: "A run and its events", params: [SdkRunId, q("limit", Limit(5000, 1000)), After], ok: { 200: R.RunWithEvents }, errors: [401, 403, 404, 422, 429] },
  },
  "/api/runs/{sdk_run_id}/spans": {
    get: { tag: "Runs", summary: "A run's spans (tree via parent_span_id)", params: [SdkRunId, q("limit", Limit(5000, 1000)), After], ok: { 200: R.RunWithSpans }, errors: [401, 403, 404, 422, 429] },
  },
  "/api/runs/{sdk_run_id}/scores": {
    get: { tag: "Scores", summary: "A run's scores, oldest first, a page at a time", params: [SdkRunId, Cursor, q("limit", Limit(5000, 1000))], ok: { 200: R.ScoreList }, errors: [401, 403, 404, 422, 429] },
  },
  "/api/runs/{sdk_run_id}/input": {
    get: {
      tag: "Human input", summary: "The answer to the run's pending question",
      params: [SdkRunId, q("wait", Schema.Int.pipe(Schema.between(0, 30)), "Seconds to hold the request until an answer arrives (long poll).")],
      ok: { 200: R.HumanAnswer, 204: null }, errors: [401, 403, 404, 422, 429],
    },
    post: { tag: "Human input", summary: "Answer the run's pending question", params: [SdkRunId], body: R.HumanAnswerInput, ok: { 201: R.HumanAnswer }, errors: [400, 401, 403, 404, 409, 413, 415, 422, 429] },
  },
  "/api/sessions": {
    get: { tag: "Sessions", summary: "List sessions, newest activity first", params: [q("agent_name", Schema.String), Since, Cursor, q("limit", Limit(500, 50))], ok: { 200: R.SessionList }, errors: [401, 403, 422, 429] },
  },
  "/api/sessions/{session_id}": {
    get: {
      tag: "Sessions", summary: "A session and its runs in start order",
      params: [{ name: "session_id", in: "path", required: true, schema: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_SESSION_ID_CHARS)) }],
      ok: { 200: R.SessionWithRuns }, errors: [401, 403, 404, 422, 429],
    },
  },
  "/api/scores": {
    post: { tag: "Scores", summary: "Score a run or one of its spans", body: ScoreInput.annotations({ identifier: "ScoreInput" }), ok: { 201: R.ScoreCreated }, errors: [400, 401, 403, 404, 413, 415, 422, 429] },
  },
  "/api/scores/batch": {
    post: {
      tag: "Scores", summary: "Score many runs in one request (up to 1,000 scores)",
      description: "Each score is stored or refused on its own: 201 with its score_id, 404 for a run not (yet) stored, 422 naming the field.",
      body: Schema.Struct({ scores: Schema.Array(ScoreInput).pipe(Schema.minItems(1), Schema.maxItems(1_000)) }).annotations({ identifier: "ScoreBatch" }),
      ok: { 207: Schema.Struct({ results: Schema.Array(Schema.Struct({
        index: Schema.Int, status: Schema.Literal(201, 404, 422), score_id: Schema.optional(Schema.String),
        error: Schema.optional(Schema.Struct({ code: Schema.String, message: Schema.String, field: Schema.optional(Schema.String) })),
      })) }).annotations({ identifier: "ScoreBatchResults" }) },
      errors: [400, 401, 403, 413, 415, 422, 429],
    },
  },
  "/api/agents/{name}/config": {
    get: {
      tag: "Agents", summary: "The agent's active config version",
      params: [{ name: "name", in: "path", required: true, schema: Schema.String }, { name: "If-None-Match", in: "header", schema: Schema.String, description: "The ETag of the version you have: 304 while it is still active." }],
      ok: { 200: R.AgentConfig, 304: null }, errors: [401, 403, 404, 429],
    },
  },
  "/api/realtime/token": {
    get: { tag: "Realtime", summary: "A token to open the live WebSocket (dashboard session)", sessionAuth: true, ok: { 200: R.RealtimeToken }, errors: [401] },
  },
  ...DATASET_OPERATIONS,
  ...EXPERIMENT_OPERATIONS,
  ...EVALUATION_OPERATIONS,
};

/** Builds the document; its component schemas are collected from every Schema the operations name. */
export function buildOpenApi(opts: { serverUrl?: string; version: string }): Json {
  const defs: Record<string, JSONSchema.JsonSchema7> = {};
  const schemaOf = (s: Body): Json =>
    JSONSchema.fromAST(s.ast, { definitions: defs, definitionPath: "#/components/schemas/", target: "openApi3.1", additionalPropertiesStrategy: "allow" }) as unknown as Json;
  const json = (s: Body) => ({ "application/json": { schema: schemaOf(s) } });

  const paths: Json = {};
  for (const [path, methods] of Object.entries(OPERATIONS)) {
    const item: Json = {};
    for (const [method, op] of Object.entries(methods)) {
      const responses: Json = {};
      for (const [status, body] of Object.entries(op.ok)) {
        responses[status] = body ? { description: body.ast.annotations[Symbol.for("effect/annotation/Description")] ?? "OK", content: json(body) } : { description: status === "304" ? "Not modified" : "No content" };
      }
      for (const status of op.errors) {
        responses[String(status)] = { description: ERROR_TEXT[status] ?? "Error", content: json(op.errorBody ?? R.ErrorBody) };
      }
      item[method] = {
        tags: [op.tag],
        summary: op.summary,
        ...(op.description ? { description: op.description } : {}),
        operationId: `${method}${path.replace(/[{}]/g, "").replace(/[/_-](\w)/g, (_, c: string) => c.toUpperCase())}`,
        ...(op.params ? { parameters: op.params.map((p) => ({ name: p.name, in: p.in, required: p.required ?? p.in === "path", ...(p.description ? { description: p.description } : {}), schema: schemaOf(p.schema) })) } : {}),
        ...(op.body
          ? { requestBody: { required: true, content: Object.fromEntries((op.bodyTypes ?? ["application/json"]).map((t) => [t, t === "application/json" ? { schema: schemaOf(op.body!) } : { schema: { type: "string", contentMediaType: t } }])) } }
          : {}),
        responses,
        ...(op.sessionAuth ? { security: [{ session: [] }] } : {}),
      };
    }
    paths[path] = item;
  }

  // An event's payload depends on its event_type: each type's payload Schema is a component, the envelope lists them.
  const payloads = Object.entries(PayloadSchemas).map(([type, s]) => schemaOf(s.annotations({ identifier: `${type.replace(/(^|_)(\w)/g, (_, __, c: string) => c.toUpperCase())}Payload` })));
  const event = defs.Event as unknown as Json;
  (event.properties as Json).payload = { description: `Fields by event_type (${EVENT_TYPES.join(", ")}).`, anyOf: payloads };

  return tidy({
    openapi: "3.1.0",
    info: {
      title: "Runwatch API",
      version: opts.version,
      description: "Observability for AI agent runs: ingest events or OpenTelemetry traces, read runs, spans, sessions and scores. docs/API.md explains every field. Objects may gain fields in later versions; unknown request fields are ignored.",
      license: { name: "MIT", identifier: "MIT" },
    },
    ...(opts.serverUrl ? { servers: [{ url: opts.serverUrl }] } : {}),
    security: [{ bearer: [] }],
    paths,
    components: {
      schemas: defs,
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "An API key (Settings → API keys): `Authorization: Bearer <64 hex>`." },
        session: { type: "apiKey", in: "cookie", name: "runwatch.sid", description: "The dashboard's login session." },
      },
    },
  }) as Json;
}

/**
 * effect marks `unknown` and `{}` with `$id: "/schemas/unknown"` (and the like) wherever they occur; repeated `$id`s
 * make one document several schema resources of the same id, which validators refuse. The titles stay.
 * `additionalProperties: true` is JSON Schema's default (bodies may gain fields; requests' unknown fields are
 * ignored): said once here rather than on every object, where reference pages invent "additionalProp1" examples.
 */
function tidy(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(tidy);
  if (v === null || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k, x]) => k !== "$id" && !(k === "additionalProperties" && x === true))
      .map(([k, x]) => [k, tidy(x)]),
  );
}

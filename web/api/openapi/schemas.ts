/**
 * The public API's response bodies as effect Schemas: /api/openapi.json is generated from these and from the request
 * Schemas the handlers decode with (core/events/schema.ts Envelope and PayloadSchemas, stores/scores.ts ScoreInput);
 * test/e2e/openapi.test.ts checks real responses against the document, so a handler that drifts fails there.
 */
import { Schema } from "effect";
import type { RunJson } from "../../../core/events/run-json.js";
import { MAX_RUN_METADATA_KEYS, MAX_RUN_TAGS } from "../../../core/events/attributes.js";
import { RUN_PREVIEW_CHARS } from "../../../core/events/run-text.js";
import { MAX_RUN_MODELS } from "../../../core/events/run.js";
import { EVENT_TYPES, RUN_STATUSES, SPAN_KINDS } from "../../../core/events/schema.js";
import { RunsFilter, RunsSort } from "../../../core/runs-filter/index.js";
import { SCORE_SOURCES, SCORE_GIVERS } from "../../../stores/scores.js";

const Iso = Schema.String.annotations({ format: "date-time" });
const Uuid = Schema.String.annotations({ format: "uuid" });
const Count = Schema.Number.pipe(Schema.nonNegative());
const NullableCount = Schema.NullOr(Count);
const Status = Schema.Literal(...RUN_STATUSES);

export const ErrorBody = Schema.Struct({
  error: Schema.Struct({
    code: Schema.String.annotations({ description: "validation_error, unauthorized, not_found, rate_limited, payload_too_large, malformed_json, …" }),
    message: Schema.String,
    field: Schema.optional(Schema.String.annotations({ description: "The request field at fault (a body field, or a query parameter)." })),
    lines: Schema.optional(Schema.Array(Schema.Struct({
      line: Schema.Int.pipe(Schema.positive()),
      field: Schema.optional(Schema.String),
      message: Schema.String,
    })).annotations({ description: "An uploaded file's bad lines (a dataset import), 1-based." })),
  }),
}).annotations({ identifier: "Error", description: "Every 4xx and 5xx answer of the JSON API." });

export const Run = Schema.Struct({
  sdk_run_id: Schema.String,
  run_id: Uuid,
  agent_name: Schema.String,
  status: Status,
  started_at: Schema.NullOr(Iso),
  ended_at: Schema.NullOr(Iso),
  duration_ms: NullableCount,
  last_event_at: Iso,
  framework: Schema.String,
  model: Schema.String,
  prompt_tokens: Count,
  completion_tokens: Count,
  total_tokens: Count,
  cost_usd: Count,
  cost_source: Schema.String,
  config_version: Schema.NullOr(Schema.Int),
  session_id: Schema.NullOr(Schema.String),
  experiment_id: Schema.NullOr(Schema.String).annotations({ description: "The experiment the run executes an item of (docs/EVALUATION.md)." }),
  dataset_item_id: Schema.NullOr(Schema.String),
  repetition: Schema.NullOr(Schema.Int),
  event_count: Count,
  error_count: Count,
  last_error: Schema.String,
  pending_question: Schema.String,
  llm_calls: Count,
  models: Schema.NullOr(Schema.Array(Schema.String)).annotations({
    description: `The models the run's LLM calls named, sorted; at most ${MAX_RUN_MODELS}, [] without LLM calls. null when the run made LLM calls but its record names no model: ` +
      "a run recorded before runs kept their models (its calls are on GET /api/runs/{sdk_run_id}/spans), or calls that named none.",
  }),
  tags: Schema.Array(Schema.String).annotations({ description: `The union of every event's tags, sorted; at most ${MAX_RUN_TAGS}.` }),
  metadata: Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) }).annotations({
    description: `The latest value of each metadata key any event sent, of the type it was sent as; at most ${MAX_RUN_METADATA_KEYS} keys.`,
  }),
  end_user: Schema.NullOr(Schema.String).annotations({ description: "The agent's own user the run served (the latest an event named)." }),
  environment: Schema.NullOr(Schema.String),
  release: Schema.NullOr(Schema.String),
  input_preview: Schema.String.annotations({ description: `The start of the run's input as text (at most ${RUN_PREVIEW_CHARS} characters; "" for none).` }),
  output_preview: Schema.String.annotations({ description: `The start of the run's output as text (at most ${RUN_PREVIEW_CHARS} characters; "" for none).` }),
}).annotations({
  identifier: "Run",
  description: "A run at its latest version: the one JSON shape of a run, also carried by the WebSocket gateway's live `events` message (docs/REALTIME.md).",
});

/** Run documents core/events/run-json.ts: the compiler holds them to the same fields, every RunJson a valid Run. */
type Documents<S, T> = [keyof S] extends [keyof T] ? ([keyof T] extends [keyof S] ? ([T] extends [S] ? true : false) : false) : false;
type Holds<T extends true> = T;
export type RunDocumentsRunJson = Holds<Documents<typeof Run.Type, RunJson>>;

export const StoredEvent = Schema.Struct({
  event_id: Uuid,
  event_type: Schema.Literal(...EVENT_TYPES),
  occurred_at: Iso,
  received_at: Iso,
  agent_name: Schema.String,
  config_version: Schema.NullOr(Schema.Int),
  span_id: Schema.NullOr(Schema.String),
  parent_span_id: Schema.NullOr(Schema.String),
  payload: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
}).annotations({ identifier: "StoredEvent" });

export const Span = Schema.Struct({
  span_id: Schema.String,
  parent_span_id: Schema.NullOr(Schema.String),
  kind: Schema.Literal(...SPAN_KINDS, "tool"),
  name: Schema.String,
  status: Schema.Literal("ok", "error", "running"),
  started_at: Iso,
  ended_at: Schema.NullOr(Iso),
  duration_ms: NullableCount,
  model: Schema.NullOr(Schema.String),
  provider: Schema.NullOr(Schema.String),
  prompt_tokens: NullableCount,
  completion_tokens: NullableCount,
  total_tokens: NullableCount,
  cached_tokens: NullableCount,
  reasoning_tokens: NullableCount,
  cost_usd: NullableCount,
  input_preview: Schema.NullOr(Schema.String),
  output_preview: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
}).annotations({ identifier: "Span", description: "A step, tool call or LLM call of a run: its start and end events paired." });

export const Score = Schema.Struct({
  score_id: Uuid,
  name: Schema.String,
  value: Schema.Union(Schema.Number, Schema.Boolean, Schema.String),
  comment: Schema.String,
  source: Schema.Literal(...SCORE_SOURCES),
  span_id: Schema.NullOr(Schema.String),
  created_at: Iso,
  evaluator: Schema.NullOr(Schema.Struct({ id: Uuid, version: Count })).annotations({ description: "The evaluator (and version) that gave the score; null for others." }),
  judge_run: Schema.NullOr(Schema.String).annotations({ description: "The sdk_run_id of the LLM judge call's own run (its tokens and cost)." }),
  given_by: Schema.NullOr(Schema.Literal(...SCORE_GIVERS)).annotations({
    description: "Who gave it, as the server saw it (source is the sender's own word): evaluator, reviewer (a member on the dashboard or in a queue), member_key (a read+ingest key of a member or above), key (any other key), event (inside an event or span). The activation gate counts the first three. null: stored before the server kept it.",
  }),
}).annotations({ identifier: "Score" });

export const Session = Schema.Struct({
  session_id: Schema.String,
  run_count: Count,
  first_started_at: Iso,
  last_activity_at: Iso,
  total_tokens: Count,
  total_cost_usd: Count,
  last_status: Status,
  agent_names: Schema.Array(Schema.String),
}).annotations({ identifier: "Session", description: "Runs that share a session_id (a conversation, a LangGraph thread)." });

const Cursor = Schema.NullOr(Schema.String).annotations({ description: "Pass as `cursor` for the next page; null on the last." });
const After = Schema.NullOr(Schema.String).annotations({ description: "Pass as `after` for the next page; null on the last." });

export const RunList = Schema.Struct({
  runs: Schema.Array(Run),
  next_cursor: Cursor,
  filter: RunsFilter,
  sort: RunsSort,
}).annotations({ identifier: "RunList" });
export const RunWithEvents = Schema.Struct({ run: Run, events: Schema.Array(StoredEvent), next_after: After }).annotations({ identifier: "RunWithEvents" });
export const RunWithSpans = Schema.Struct({ run: Run, spans: Schema.Array(Span), next_after: After }).annotations({ identifier: "RunWithSpans" });
/** A run's agent graph (web/runs/agent-graph.ts). */
export const GraphNode = Schema.Struct({
  id: Schema.String, name: Schema.String, kind: Schema.String, count: Count, errors: Count, total_ms: Schema.Number, max_ms: Schema.Number,
  span_ids: Schema.Array(Schema.String).annotations({ description: "The node's first spans (at most 100), in start order." }),
}).annotations({ identifier: "GraphNode" });
export const GraphEdge = Schema.Struct({
  from: Schema.String, to: Schema.String,
  type: Schema.Literal("call", "handoff").annotations({ description: "call: a span's parent to the span; handoff: a graph node or agent to the next one under the same parent." }),
  count: Count, total_ms: Schema.Number,
}).annotations({ identifier: "GraphEdge" });
export const RunWithGraph = Schema.Struct({
  run: Run,
  graph: Schema.Struct({ nodes: Schema.Array(GraphNode), edges: Schema.Array(GraphEdge), span_count: Count, omitted_nodes: Count }),
}).annotations({ identifier: "RunWithGraph" });
export const ScoreList = Schema.Struct({ scores: Schema.Array(Score), next_cursor: Cursor }).annotations({ identifier: "ScoreList" });
export const ScoreCreated = Schema.Struct({ score_id: Uuid }).annotations({ identifier: "ScoreCreated" });
export const SessionList = Schema.Struct({ sessions: Schema.Array(Session), next_cursor: Cursor }).annotations({ identifier: "SessionList" });
export const SessionWithRuns = Schema.Struct({ session: Session, runs: Schema.Array(Run) }).annotations({ identifier: "SessionWithRuns" });

export const Accepted = Schema.Struct({ event_id: Uuid, run_id: Uuid, sdk_run_id: Schema.String }).annotations({ identifier: "Accepted", description: "The event is in the durable log: it will be stored." });
export const BatchResult = Schema.Struct({
  accepted: Count,
  rejected: Count,
  results: Schema.Array(
    Schema.Union(
      Schema.Struct({ index: Count, status: Schema.Literal(202), event_id: Uuid, run_id: Uuid, sdk_run_id: Schema.String }),
      Schema.Struct({ index: Count, status: Schema.Literal(422), error: ErrorBody.fields.error }),
    ),
  ),
}).annotations({ identifier: "BatchResult", description: "One result per event, in the order sent: 202 accepted or 422 refused (naming the field)." });

export const HumanAnswer = Schema.Struct({
  response: Schema.String,
  responded_by: Schema.String,
  answered_at: Iso,
  request_event_id: Uuid,
  question: Schema.String,
}).annotations({ identifier: "HumanAnswer" });
export const HumanAnswerInput = Schema.Struct({
  response: Schema.String.pipe(Schema.minLength(1)),
  responded_by: Schema.optional(Schema.String),
}).annotations({ identifier: "HumanAnswerInput" });

export const AgentConfig = Schema.Struct({
  agent: Schema.String,
  version: Schema.Int,
  config: Schema.Unknown,
  changelog: Schema.String,
  activated_at: Schema.NullOr(Iso),
  experiment: Schema.NullOr(Schema.Struct({ id: Schema.String, name: Schema.String, dataset: Schema.String, dataset_version: Schema.Int, status: Schema.String }))
    .annotations({ description: "The version's latest experiment (docs/EVALUATION.md), or null." }),
}).annotations({ identifier: "AgentConfig", description: "The agent's active config version; its ETag answers If-None-Match with 304." });

export const RealtimeToken = Schema.Struct({
  url: Schema.String,
  token: Schema.String,
  protocols: Schema.Array(Schema.String),
  channel: Schema.String,
  expires_at: Iso,
}).annotations({ identifier: "RealtimeToken", description: "What a logged-in page needs to open the live WebSocket (docs/REALTIME.md)." });

export const OtlpExportResponse = Schema.Struct({
  partialSuccess: Schema.optional(Schema.Struct({ rejectedSpans: Schema.optional(Schema.Union(Schema.String, Schema.Number)), errorMessage: Schema.optional(Schema.String) })),
}).annotations({ identifier: "ExportTraceServiceResponse", description: "OTLP/JSON; application/x-protobuf requests get the protobuf message." });
export const OtlpStatus = Schema.Struct({
  code: Schema.Int,
  message: Schema.String,
  error: Schema.optional(ErrorBody.fields.error),
}).annotations({ identifier: "OtlpStatus", description: "google.rpc.Status (OTLP/JSON), with Runwatch's error object." });

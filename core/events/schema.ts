/**
 * The ingest contract (docs/API.md: POST /api/ingest, its payloads and value rules) as effect Schemas.
 *
 * Decoding is two-stage so that errors name one precise field: first the envelope, then the payload
 * schema chosen by event_type (paths come back prefixed with "payload."). Known payload fields are typed;
 * unknown payload fields are preserved, so agents can send extra context without a schema change.
 */
import { Either, ParseResult, Schema } from "effect";
import { ValidationError } from "../errors.js";
import { makeStorable } from "./storable.js";
import { RUN_ATTRIBUTE_FIELDS, type RunAttributes } from "./attributes.js";

export const EVENT_TYPES = [
  "run_start",
  "run_end",
  "error",
  "step",
  "tool_call",
  "human_input_requested",
  "human_input_received",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const RUN_STATUSES = ["running", "success", "error", "waiting_for_input"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  message: () => "must be a JSON object",
});
const Phase = Schema.Literal("start", "end").annotations({ message: () => ({ message: 'must be "start" or "end"', override: true }) });
/** Token counts, durations: whole, not negative, and exact in a JSON number (≤ 2^53 − 1). */
export const isCount = (n: unknown): n is number =>
  typeof n === "number" && Number.isInteger(n) && n >= 0 && n <= Number.MAX_SAFE_INTEGER;
const COUNT_RULE = "must be a whole number from 0 to 9007199254740991 (2^53 − 1)";
const Count = Schema.Number.pipe(
  Schema.filter((n) => isCount(n) || COUNT_RULE, { jsonSchema: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER } }),
);
/** Costs in USD: finite, not negative, at most a million per event. */
export const MAX_COST_USD = 1_000_000;
export const isCostUsd = (n: unknown): n is number => typeof n === "number" && Number.isFinite(n) && n >= 0 && n <= MAX_COST_USD;
const COST_RULE = `must be a number from 0 to ${MAX_COST_USD}`;
const CostUsd = Schema.Number.pipe(Schema.filter((n) => isCostUsd(n) || COST_RULE, { jsonSchema: { minimum: 0, maximum: MAX_COST_USD } }));
const Str = Schema.String;
const opt = Schema.optional;

/** Timestamps are stored as DateTime64(3) in ClickHouse; outside these years a date is a client bug. */
export const MIN_TIMESTAMP_MS = Date.UTC(1970, 0, 1);
export const MAX_TIMESTAMP_MS = Date.UTC(2200, 11, 31, 23, 59, 59, 999);
/** Whether `ms` is a time that can be stored and queried (a filter or cursor outside it is a client error). */
export const isStorableTime = (ms: number): boolean => ms >= MIN_TIMESTAMP_MS && ms <= MAX_TIMESTAMP_MS;

/** ISO 8601 date-time with an explicit offset or Z, e.g. 2026-11-23T10:00:00.123Z. */
const IsoTimestamp = Str.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/, {
    message: () => "must be an ISO 8601 timestamp with a time zone, e.g. 2026-11-23T10:00:00.000Z",
  }),
  Schema.filter((s) => {
    const t = Date.parse(s);
    if (Number.isNaN(t)) return "is not a valid date";
    return isStorableTime(t) || "must be between 1970-01-01 and 2200-12-31";
  }),
);

export const SPAN_KINDS = ["step", "llm", "retrieval", "embedding", "agent", "chain", "plan", "reranker", "guardrail"] as const;
export type SpanKind = (typeof SPAN_KINDS)[number];
const SpanKind = Schema.Literal(...SPAN_KINDS).annotations({ message: () => ({ message: `must be one of ${SPAN_KINDS.join(", ")}`, override: true }) });

/** A span id: the client's (e.g. LangChain's run id), unique within a run; the start and end of a span share it. */
export const MAX_SPAN_ID_CHARS = 64;
export const MAX_SDK_RUN_ID_CHARS = 256;
export const MAX_SESSION_ID_CHARS = 200;
const SpanId = Str.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  Schema.maxLength(MAX_SPAN_ID_CHARS, { message: () => `must be at most ${MAX_SPAN_ID_CHARS} characters` }),
);

/** The payload fields that are counts (Count) and costs (CostUsd), by event type: the schemas below and checkBuiltEvent read these. */
export const COUNT_FIELDS = {
  run_end: ["prompt_tokens", "completion_tokens", "total_tokens"],
  step: ["duration_ms", "prompt_tokens", "completion_tokens", "total_tokens", "cached_tokens", "cache_write_tokens", "reasoning_tokens", "time_to_first_token_ms"],
  tool_call: ["duration_ms"],
} as const;
export const COST_FIELDS = { run_end: ["cost_usd"], step: ["cost_usd"] } as const;
const counts = <K extends string>(keys: readonly K[]) =>
  Object.fromEntries(keys.map((k) => [k, opt(Count)])) as { [P in K]: Schema.optional<typeof Count> };

const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const Uuid = Str.pipe(Schema.pattern(UUID_PATTERN, { message: () => "must be a UUID" }));
export const MAX_DATASET_ITEM_ID_CHARS = 200;
/** Most repetitions of each item in one experiment. */
export const MAX_REPETITIONS = 100;

export const PayloadSchemas = {
  run_start: Schema.Struct({
    framework: opt(Str),
    input: opt(Schema.Unknown),
    /** The experiment, dataset item and repetition the run executes (docs/EVALUATION.md, Experiments). */
    experiment_id: opt(Uuid),
    dataset_item_id: opt(Str.pipe(Schema.minLength(1), Schema.maxLength(MAX_DATASET_ITEM_ID_CHARS))),
    repetition: opt(Schema.Int.pipe(Schema.between(1, MAX_REPETITIONS, { message: () => `must be a whole number from 1 to ${MAX_REPETITIONS}` }))),
  }),
  run_end: Schema.Struct({
    output: opt(Schema.Unknown),
    ...counts(COUNT_FIELDS.run_end),
    cost_usd: opt(CostUsd),
    model: opt(Str),
  }),
  error: Schema.Struct({ error_type: opt(Str), error_message: opt(Str), traceback: opt(Str) }),
  step: Schema.Struct({
    node_name: Str.pipe(Schema.minLength(1)),
    phase: Phase,
    output: opt(Schema.Unknown),
    /** What the span is (docs/API.md, Spans): "llm" makes it an LLM call with the fields below. */
    kind: opt(SpanKind),
    input: opt(Schema.Unknown),
    model: opt(Str.pipe(Schema.maxLength(200))),
    provider: opt(Str.pipe(Schema.maxLength(100))),
    /** duration_ms; prompt/completion/total tokens; cached_tokens (read from the provider's prompt cache, a part of
     * prompt_tokens); cache_write_tokens (written to it, a part of prompt_tokens); reasoning_tokens (a part of
     * completion_tokens, as the providers count them); time_to_first_token_ms. */
    ...counts(COUNT_FIELDS.step),
    cost_usd: opt(CostUsd),
    finish_reason: opt(Str.pipe(Schema.maxLength(100))),
    /** The prompt version the call used (docs/PROMPTS.md): a prompt's name and its version number. */
    prompt_name: opt(Str.pipe(Schema.minLength(1), Schema.maxLength(100))),
    prompt_version: opt(Schema.Int.pipe(Schema.between(1, 4_294_967_295, { message: () => "must be a whole number from 1 to 4294967295" }))),
  }),
  tool_call: Schema.Struct({
    tool_name: Str.pipe(Schema.minLength(1)),
    phase: Phase,
    input_preview: opt(Str),
    output_preview: opt(Str),
    ...counts(COUNT_FIELDS.tool_call),
  }),
  human_input_requested: Schema.Struct({ question: Str, context: opt(JsonObject), channel: opt(Str) }),
  human_input_received: Schema.Struct({ response: Str, responded_by: opt(Str) }),
} as const;

/**
 * The envelope only checks that payload is a plain JSON object; its fields are decoded once, by the payload
 * schema of the event type (a Record schema here would walk and copy every payload key a second time).
 */
const PayloadObject = Schema.declare(
  (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u),
).annotations({ message: () => "must be a JSON object", jsonSchema: { type: "object", description: "The event type's fields (PayloadSchemas)." } });

export const Envelope = Schema.Struct({
  event_type: Schema.Literal(...EVENT_TYPES).annotations({ message: () => ({ message: `must be one of ${EVENT_TYPES.join(", ")}`, override: true }) }),
  sdk_run_id: Str.pipe(Schema.minLength(1), Schema.maxLength(MAX_SDK_RUN_ID_CHARS)),
  payload: PayloadObject,
  occurred_at: opt(IsoTimestamp),
  agent_name: opt(Str.pipe(Schema.minLength(1), Schema.maxLength(200))),
  /** Optional client-chosen idempotency id (UUID). Retried sends with the same id are stored once. */
  event_id: opt(Uuid),
  /** Optional span of the run this event belongs to, and the span it nests in (docs/API.md, Spans). */
  span_id: opt(SpanId),
  parent_span_id: opt(SpanId),
  /** Optional session (a conversation, a LangGraph thread) the run belongs to; the run's first event with one sets it. */
  session_id: opt(Str.pipe(Schema.minLength(1), Schema.maxLength(MAX_SESSION_ID_CHARS))),
  /** Optional version of the agent config the run uses (agent registry). */
  config_version: opt(
    Schema.Int.pipe(Schema.between(1, 4_294_967_295, { message: () => "must be a whole number from 1 to 4294967295" })),
  ),
  /** Optional tags, metadata, end user, environment and release of the run (core/events/attributes.ts). */
  ...RUN_ATTRIBUTE_FIELDS,
});

/** A validated ingest event, as the client sent it (before server-side enrichment). */
export interface IngestEvent extends RunAttributes {
  readonly event_type: EventType;
  readonly sdk_run_id: string;
  readonly payload: Record<string, unknown>;
  readonly occurred_at?: string;
  readonly agent_name?: string;
  readonly event_id?: string;
  readonly span_id?: string;
  readonly parent_span_id?: string;
  readonly session_id?: string;
  readonly config_version?: number;
}

const parseOptions = { errors: "first", onExcessProperty: "preserve" } as const;
const decodeEnvelope = Schema.decodeUnknownEither(Envelope, parseOptions);
const payloadDecoders = Object.fromEntries(
  Object.entries(PayloadSchemas).map(([k, s]) => [k, Schema.decodeUnknownEither(s as Schema.Schema<any, any>, parseOptions)]),
) as Record<EventType, (u: unknown) => Either.Either<Record<string, unknown>, ParseResult.ParseError>>;

/** The first issue of a schema's ParseError as a ValidationError naming its field (prefixed: "payload.tokens"). */
export function toValidationError(err: ParseResult.ParseError, prefix = ""): ValidationError {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(err)[0];
  const pathParts = [prefix, ...(issue?.path ?? []).map(String)].filter(Boolean);
  const field = pathParts.join(".") || undefined;
  const message = issue
    ? issue._tag === "Missing"
      ? `${field} is required`
      : `${field ?? "body"}: ${issue.message}`
    : "invalid event";
  return new ValidationError({ message, field });
}

/**
 * The same schemas as type guards. Every schema above is a refinement (filters, literals, lengths, patterns), none
 * a transformation, so a value they accept decodes to an equal value: an event the guards accept is returned as
 * it is, and only a refused one takes the decoding walk, for the error that names its field. The guards cost
 * half of that walk (docs/PIPELINE.md); schema.test.ts checks that both ways agree.
 */
const isEnvelope = Schema.is(Envelope);
const payloadGuards = Object.fromEntries(Object.entries(PayloadSchemas).map(([k, s]) => [k, Schema.is(s as Schema.Schema<any, any>)])) as unknown as Record<
  EventType,
  (u: unknown) => boolean
>;

/** Validates one ingest event. Never throws; returns the event or a ValidationError naming the field. */
export function parseIngestEvent(input: unknown): Either.Either<IngestEvent, ValidationError> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return Either.left(new ValidationError({ message: "the event must be a JSON object" }));
  }
  try {
    input = makeStorable(input);
  } catch (err) {
    if (err instanceof ValidationError) return Either.left(err);
    throw err;
  }
  if (isEnvelope(input) && (input.event_type !== "run_start" || input.agent_name !== undefined) && payloadGuards[input.event_type](input.payload)) {
    return Either.right(input as IngestEvent);
  }
  return decodeStorable(input);
}

/** parseIngestEvent's decoding walk, for an event that makeStorable has made storable. */
export function decodeStorable(input: unknown): Either.Either<IngestEvent, ValidationError> {
  const env = decodeEnvelope(input);
  if (Either.isLeft(env)) return Either.left(toValidationError(env.left, ""));
  const e = env.right;
  if (e.event_type === "run_start" && e.agent_name === undefined) {
    return Either.left(new ValidationError({ message: "agent_name is required with run_start", field: "agent_name" }));
  }
  const payload = payloadDecoders[e.event_type](e.payload);
  if (Either.isLeft(payload)) return Either.left(toValidationError(payload.left, "payload"));
  return Either.right({ ...(e as IngestEvent), payload: payload.right });
}

/**
 * Checks an event that a receiver assembled itself from typed parts (otlp/mapping.ts), where parseIngestEvent's
 * full schema walk costs more than everything else the receiver does: the value rules (makeStorable) and the
 * payload's count and cost bounds, the checks such parts can fail. The receiver guarantees the rest (event type,
 * phase, ids, times in range, string lengths); schema.test.ts checks that both functions agree on such events.
 */
export function checkBuiltEvent(input: IngestEvent): Either.Either<IngestEvent, ValidationError> {
  let e: IngestEvent;
  try {
    e = makeStorable(input);
  } catch (err) {
    if (err instanceof ValidationError) return Either.left(err);
    throw err;
  }
  const type = e.event_type as keyof typeof COUNT_FIELDS & keyof typeof COST_FIELDS;
  for (const k of COUNT_FIELDS[type] ?? []) {
    const v = e.payload[k];
    if (v !== undefined && !isCount(v)) return Either.left(new ValidationError({ field: `payload.${k}`, message: `payload.${k}: ${COUNT_RULE}` }));
  }
  for (const k of COST_FIELDS[type] ?? []) {
    const v = e.payload[k];
    if (v !== undefined && !isCostUsd(v)) return Either.left(new ValidationError({ field: `payload.${k}`, message: `payload.${k}: ${COST_RULE}` }));
  }
  return Either.right(e);
}

/**
 * An event after ingest accepted it: owner, ids and timestamps fixed. This is what travels through
 * the EventLog, is processed by the pipeline and stored in ClickHouse.
 */
export interface LoggedEvent extends RunAttributes {
  readonly event_id: string;
  /** The project the event belongs to: the sending key's (docs/TEAMS.md). Every read is scoped by it. */
  readonly project_id: number;
  /** The user whose key sent the event. */
  readonly user_id: number;
  readonly run_id: string;
  readonly sdk_run_id: string;
  readonly event_type: EventType;
  readonly agent_name: string | null;
  payload: Record<string, unknown>;
  /** ISO 8601 UTC with milliseconds. Defaults to received_at when the client sent none. */
  readonly occurred_at: string;
  readonly received_at: string;
  readonly config_version: number | null;
  /** The span this event belongs to, and its parent span; "" when the client sent none. */
  readonly span_id?: string;
  readonly parent_span_id?: string;
  /** The session the client named on this event (docs/API.md, Sessions); absent when none. */
  readonly session_id?: string;
}

/** An event as plugins see it in onEvent: the payload may be replaced or edited (e.g. truncated). */
export interface PipelineEvent extends LoggedEvent {
  /**
   * The event_id is already stored (a client retry with the same event_id, or a replay after a crash).
   * It is not stored again, not counted again and not broadcast again; status rules still see it (they are
   * idempotent).
   */
  readonly duplicate: boolean;
}

/**
 * The event as plugins get it: the logged event with its duplicate flag, set again on each attempt. Not a copy: a
 * part's events are alive until its writes end, and a copy of each cost the pipeline CPU in collection
 * (docs/BENCHMARKS.md, "Pipeline thread, per span").
 */
export const pipelineEvent = (e: LoggedEvent, duplicate: boolean): PipelineEvent => Object.assign(e, { duplicate });

/**
 * OTLP spans → Runwatch events (docs/OTEL.md): a trace is a run (`sdk_run_id` = the trace id, 32 lowercase hex
 * characters), each span one end event (OTLP delivers a span when it has ended) carrying its span id, parent,
 * duration and what conventions.ts reads from its attributes. Per trace in an export: a `run_start` (so the run is
 * live, status running, from its first exported span), and at the root span's end a `run_end` — or, when the root
 * failed, or the root is no named agent and the outermost named agent under it failed, an `error` event. Any other
 * span's failure marks the span (shown red in the trace), not the run: agents recover from failed tool calls.
 *
 * Event ids are derived from trace id + span id + phase, so an exporter's retry of an export is stored once.
 *
 * The mapping is total: only a span that `malformed` names (ids, times) is refused, which the receiver can tell
 * before it acknowledges an export, without mapping it (the pipeline maps exports: otlp/export-record.ts). Every
 * other value is made to pass the value rules (core/events/storable.ts) and the event schema: a count or cost out
 * of range is left out, a text over the longest storable string is cut, an agent or session name that could not be
 * stored as an identifier (U+0000, a lone surrogate) is left out. The caller still runs checkBuiltEvent on each
 * event (it repairs U+0000 and lone surrogates in content); mapping.test.ts checks that nothing it maps fails it.
 */
import { isCostUsd, isCount, MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS } from "../core/events/schema.js";
import { previewOf } from "../core/events/spans.js";
import { eventIdFor } from "../core/ids.js";
import { isoOfMs } from "../core/events/iso-time.js";
import { MAX_STRING_CHARS } from "../core/events/storable.js";
import {
  AGENT_NAME, AGENT_NODE_ID, AGENT_SPAN_NAMES, CHOICE_EVENT, CONTENT_ATTRIBUTES, EVENT_CONTENT, MESSAGE_EVENTS, ENTITY_NAME, EVALUATION_EVENT, EXCEPTION_ATTRIBUTES, EXCEPTION_EVENT, FINISH_REASONS, KIND_ATTRIBUTES,
  LLM_ATTRIBUTES, MS_TO_FIRST_CHUNK, SERVICE_NAME, SESSION_ID, TIME_TO_FIRST_CHUNK, TOOL_ATTRIBUTES, type MappedKind,
} from "./conventions.js";
import { attrText, first, identifier, STATUS_ERROR, type Attributes, type AttrValue, type OtlpSpan } from "./trace-model.js";
import { addRunAttributes } from "./run-attributes.js";
import { evaluationScore } from "./evaluations.js";
import { linksPayload } from "./span-links.js";

export type RawEvent = Record<string, unknown>;
export interface MappedSpan {
  /** The span's position in the export (for partial_success). */
  readonly index: number;
  readonly events: RawEvent[];
}
export interface MappedTrace {
  readonly traceId: string;
  /** The spans of this trace in the export; refused all together when runStart is refused. */
  readonly runStart: RawEvent;
  readonly spans: MappedSpan[];
}
export interface MappedExport {
  readonly traces: MappedTrace[];
  readonly refused: { readonly index: number; readonly reason: string }[];
}

const MAX_AGENT_NAME = 200;
/** The most scores one span's evaluation events give (each is a few object keys; an event holds at most MAX_KEYS). */
const MAX_SCORES_PER_SPAN = 100;
/** The run's end sorts after the root span's end of the same millisecond (core/ids.ts eventIdFor). */
const RUN_END_RANK = 1;

const firstText = (attrs: Attributes, keys: readonly string[]): string | undefined => {
  const v = first(attrs, keys);
  return v === undefined ? undefined : attrText(v);
};
/** `text` cut to a storable length, else `fallback`. */
const textOr = (text: string | undefined, fallback: string): string => (text === undefined ? fallback : storable(text));
/** Text cut to the longest string an event may hold (the preview plugin cuts previews much shorter later). */
const storable = (s: string): string => (s.length > MAX_STRING_CHARS ? s.slice(0, MAX_STRING_CHARS) : s);
/** Content as text for a preview: strings as sent (often JSON already), anything else as JSON. */
const asText = (v: AttrValue | undefined): string | undefined =>
  v === undefined ? undefined : storable(typeof v === "string" ? v : JSON.stringify(v));
/** Counts may arrive as int64, double or numeric text; anything else is left out. */
const asNumber = (v: AttrValue | undefined): number | undefined =>
  typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : undefined;

export function kindOf(attrs: Attributes): MappedKind {
  for (const [key, table] of KIND_ATTRIBUTES) {
    const v = attrs.get(key);
    if (typeof v !== "string") continue;
    const kind = table[v] ?? table[v.toUpperCase()] ?? table[v.toLowerCase()];
    if (kind) return kind;
  }
  return first(attrs, LLM_ATTRIBUTES.model) !== undefined ? "llm" : "step";
}

/** Messages flattened one attribute per field (gen_ai.prompt.0.content, llm.input_messages.0.message.role, …) as a list. */
function indexedMessages(attrs: Attributes, prefixes: readonly string[]): Record<string, AttrValue>[] | undefined {
  for (const prefix of prefixes) {
    const out: Record<string, AttrValue>[] = [];
    const dot = `${prefix}.`;
    for (const [key, value] of attrs) {
      if (!key.startsWith(dot)) continue;
      const m = /^(\d{1,4})\.(?:message\.)?(.+)$/.exec(key.slice(dot.length));
      if (!m) continue;
      (out[Number(m[1])] ??= Object.create(null) as Record<string, AttrValue>)[m[2]!] = value;
    }
    const list = out.filter(Boolean);
    if (list.length) return list;
  }
  return undefined;
}

function content(span: OtlpSpan, which: "input" | "output", kind: MappedKind): string | undefined {
  const attrs = span.attributes;
  const input = which === "input";
  if (kind === "tool") return asText(first(attrs, input ? TOOL_ATTRIBUTES.arguments : TOOL_ATTRIBUTES.result) ?? eventContent(span, which, true));
  const direct = first(attrs, CONTENT_ATTRIBUTES[which]) ??
    (kind === "llm" ? indexedMessages(attrs, input ? CONTENT_ATTRIBUTES.indexedInput : CONTENT_ATTRIBUTES.indexedOutput) : undefined) ??
    first(attrs, input ? CONTENT_ATTRIBUTES.inputValue : CONTENT_ATTRIBUTES.outputValue) ??
    eventContent(span, which, false);
  const system = input ? first(attrs, CONTENT_ATTRIBUTES.system) : undefined;
  if (system !== undefined) return storable(JSON.stringify({ system_instructions: system, messages: direct ?? null }));
  return asText(direct);
}

/**
 * Content from the span's message and choice events (conventions.ts MESSAGE_EVENTS): the input as the list of
 * messages with their roles (a tool's: its tool message alone), the output as the choice's message (several: a list).
 */
function eventContent(span: OtlpSpan, which: "input" | "output", tool: boolean): AttrValue | undefined {
  if (span.events.length === 0) return undefined;
  const out: AttrValue[] = [];
  for (const e of span.events) {
    if (which === "output") {
      if (e.name === CHOICE_EVENT) {
        const message = first(e.attributes, EVENT_CONTENT.choice);
        if (message !== undefined) out.push(message);
      }
      continue;
    }
    const role = MESSAGE_EVENTS[e.name];
    if (role === undefined || (tool && role !== "tool")) continue;
    const text = first(e.attributes, EVENT_CONTENT.message);
    if (text !== undefined) out.push(tool ? text : { role, content: text });
  }
  if (out.length === 0) return undefined;
  return out.length === 1 && (which === "output" || tool) ? out[0] : out;
}

/** The span's `gen_ai.evaluation.result` events as scores (evaluations.ts), at most MAX_SCORES_PER_SPAN. */
function evaluationsOf(span: OtlpSpan): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const e of span.events) {
    if (e.name !== EVALUATION_EVENT || out.length >= MAX_SCORES_PER_SPAN) continue;
    const score = evaluationScore(e.attributes);
    if (score) out.push(score);
  }
  return out;
}

/** The span's failure, from its last `exception` event and its status; undefined unless its status is ERROR. */
function failureOf(span: OtlpSpan): { error_type: string; error_message: string; traceback?: string } | undefined {
  if (span.statusCode !== STATUS_ERROR) return undefined;
  const exception = [...span.events].reverse().find((e) => e.name === EXCEPTION_EVENT)?.attributes;
  const from = (keys: readonly string[]) => {
    const text = (exception && firstText(exception, keys)) ?? firstText(span.attributes, keys);
    return text === undefined ? undefined : storable(text);
  };
  const traceback = from(EXCEPTION_ATTRIBUTES.stacktrace);
  return {
    error_type: from(EXCEPTION_ATTRIBUTES.type) ?? "Error",
    error_message: from(EXCEPTION_ATTRIBUTES.message) ?? storable(span.statusMessage),
    ...(traceback !== undefined ? { traceback } : {}),
  };
}

/** Adds an LLM call's model, provider, counts, cost, finish reason and time to first token to `out`. */
function llmFields(attrs: Attributes, out: Record<string, unknown>): void {
  const model = firstText(attrs, LLM_ATTRIBUTES.model);
  if (model !== undefined) out.model = model.slice(0, 200);
  const provider = firstText(attrs, LLM_ATTRIBUTES.provider);
  if (provider !== undefined) out.provider = provider.slice(0, 100);
  for (const field of ["prompt_tokens", "completion_tokens", "total_tokens", "cached_tokens", "cache_write_tokens", "reasoning_tokens", "cost_usd"] as const) {
    // A count or cost the schema would refuse (negative, fractional, past 2^53) is left out, not the span.
    const n = asNumber(first(attrs, LLM_ATTRIBUTES[field]));
    if (n !== undefined && (field === "cost_usd" ? isCostUsd(n) : isCount(n))) out[field] = n;
  }
  const finish = first(attrs, FINISH_REASONS);
  const reason = Array.isArray(finish) ? finish[0] : finish;
  if (reason !== undefined && reason !== null) out.finish_reason = attrText(reason).slice(0, 100);
  const ttft = asNumber(attrs.get(TIME_TO_FIRST_CHUNK) ?? undefined);
  const ttftMsSent = asNumber(attrs.get(MS_TO_FIRST_CHUNK) ?? undefined);
  const ttftMs = ttft !== undefined ? Math.round(ttft * 1000) : ttftMsSent !== undefined ? Math.round(ttftMsSent) : undefined;
  if (isCount(ttftMs)) out.time_to_first_token_ms = ttftMs;
  const [promptName, promptVersion] = [firstText(attrs, LLM_ATTRIBUTES.prompt_name), asNumber(first(attrs, LLM_ATTRIBUTES.prompt_version))];
  if (promptName && promptVersion !== undefined && Number.isInteger(promptVersion) && promptVersion >= 1 && promptVersion <= 4_294_967_295) Object.assign(out, { prompt_name: promptName.slice(0, 100), prompt_version: promptVersion });
}

const inRange = (ms: number): boolean => Number.isFinite(ms) && ms > 0 && ms >= MIN_TIMESTAMP_MS && ms <= MAX_TIMESTAMP_MS;

/** Why a span cannot be taken at all (ids, times); undefined when it can. */
function malformed(span: OtlpSpan): string | undefined {
  if (!span.traceId) return "traceId must be 16 bytes (32 hex characters), not all zeros";
  if (!span.spanId) return "spanId must be 8 bytes (16 hex characters), not all zeros";
  if (span.parentSpanId === null) return "parentSpanId must be empty or 8 bytes (16 hex characters)";
  if (!inRange(span.startMs)) return "startTimeUnixNano must be a time between 1970 and 2200";
  if (!inRange(span.endMs)) return "endTimeUnixNano must be a time between 1970 and 2200";
  return undefined;
}

/** The span's end event (a tool_call for tool spans, else a step with its kind). */
function spanEnd({ span, kind, agent }: KindedSpan, traceId: string, failure: ReturnType<typeof failureOf>): RawEvent {
  const attrs = span.attributes;
  const input = content(span, "input", kind);
  const output = content(span, "output", kind);
  const scores = evaluationsOf(span);
  const name = storable(span.name || firstText(attrs, ENTITY_NAME) || "span");
  // Built by assignment, in the order the keys are stored: spreading conditional literals made a throw-away object
  // per optional field, for every span.
  const payload: Record<string, unknown> = kind === "tool"
    ? { tool_name: textOr(firstText(attrs, TOOL_ATTRIBUTES.name), name) }
    : { node_name: textOr(firstText(attrs, ENTITY_NAME), name), kind };
  payload.phase = "end";
  // Whole ms of the times as stored (ISO, ms floored), so the span starts exactly where its start was.
  payload.duration_ms = Math.max(0, Math.floor(span.endMs) - Math.floor(span.startMs));
  if (input !== undefined) payload.input_preview = input;
  if (output !== undefined) payload.output_preview = output;
  if (failure) payload.error = failure;
  if (scores.length > 0) payload.scores = scores;
  if (span.links && span.links.length > 0) {
    const links = linksPayload(span.links);
    if (links.length > 0) payload.links = links;
  }
  if (kind === "llm" || kind === "embedding") llmFields(attrs, payload);
  // An agent span names the run's agent: agents end after the sub-agents they call, so the outermost is applied last.
  const event: RawEvent = { event_type: kind === "tool" ? "tool_call" : "step" };
  if (kind === "agent" && agent) event.agent_name = agent;
  event.sdk_run_id = traceId;
  event.event_id = eventIdFor(`otlp:${traceId}:${span.spanId}:end`, span.endMs);
  event.occurred_at = isoOfMs(span.endMs);
  event.span_id = span.spanId;
  if (span.parentSpanId) event.parent_span_id = span.parentSpanId;
  event.payload = payload;
  addRunAttributes(event, span);
  return event;
}

/**
 * The agent a span names: its agent-name attribute (one that could not be an identifier is passed over), else for an
 * agent span its graph node id, or what its instrumentation writes in the span's name (AGENT_SPAN_NAMES).
 */
function agentNameOf(span: OtlpSpan, kind: MappedKind): string | undefined {
  const named = identifier(firstText(span.attributes, AGENT_NAME), MAX_AGENT_NAME);
  if (named || kind !== "agent") return named;
  const node = identifier(firstText(span.attributes, AGENT_NODE_ID), MAX_AGENT_NAME);
  if (node) return node;
  const pattern = AGENT_SPAN_NAMES[span.scope];
  return pattern && identifier(pattern.exec(span.name)?.[1], MAX_AGENT_NAME);
}

/** The run's agent: the one the root names, else the outermost (earliest) agent span's; else service.name. */
function agentOf(spans: readonly KindedSpan[], rooted: KindedSpan | undefined): { name: string; fromGenAi: boolean } {
  if (rooted?.agent) return { name: rooted.agent, fromGenAi: true };
  let agent: { name: string; at: number } | undefined;
  for (const { span: s, kind, agent: n } of spans) {
    if (kind !== "agent") continue;
    if (n && (!agent || s.startMs < agent.at)) agent = { name: n, at: s.startMs };
  }
  if (agent) return { name: agent.name, fromGenAi: true };
  const service = identifier(firstText((rooted?.span ?? spans[0]!.span).resource, [SERVICE_NAME]), MAX_AGENT_NAME);
  return { name: service ?? "unknown_service", fromGenAi: false };
}

const MAX_SESSION_ID = 200;
/**
 * The trace's session: gen_ai.conversation.id or session.id of the root, else of the first span that has one. One
 * that could not be stored as an identifier (U+0000, a lone surrogate) is left out rather than refusing the trace.
 */
function sessionOf(spans: readonly KindedSpan[], root: OtlpSpan | undefined): string | undefined {
  for (const s of root ? [root, ...spans.map((k) => k.span)] : spans.map((k) => k.span)) {
    const text = firstText(s.attributes, SESSION_ID);
    if (text) return identifier(text, MAX_SESSION_ID);
  }
  return undefined;
}

/** An agent span that names its agent (gen_ai.agent.name, agent.name, the AI SDK's functionId). */
const isNamedAgent = (s: KindedSpan): boolean => s.kind === "agent" && s.agent !== undefined;

/**
 * The failure of the trace's outermost named agent span (none of the export's spans above it is a named agent), the
 * earliest when several. A root that is not such an agent (a workflow span: the OpenAI Agents SDK's "Agent workflow")
 * can end OK around an agent that failed, and then the run has failed; a named agent's failure under another named
 * agent is a sub-agent's, which the outer agent recovered from unless it failed too.
 */
function outermostAgentFailure(spans: readonly KindedSpan[]): ReturnType<typeof failureOf> {
  const byId = new Map(spans.map((s) => [s.span.spanId!, s]));
  let found: { failure: NonNullable<ReturnType<typeof failureOf>>; at: number } | undefined;
  for (const s of spans) {
    if (s.span.statusCode !== STATUS_ERROR || !isNamedAgent(s)) continue;
    let parent = byId.get(s.span.parentSpanId ?? "");
    for (let hops = 0; parent && !isNamedAgent(parent) && hops < spans.length; hops++) parent = byId.get(parent.span.parentSpanId ?? "");
    if (parent) continue;
    if (!found || s.span.startMs < found.at) found = { failure: failureOf(s.span)!, at: s.span.startMs };
  }
  return found?.failure;
}

interface KindedSpan {
  readonly span: OtlpSpan;
  readonly index: number;
  readonly kind: MappedKind;
  /** The agent the span names (agentNameOf), read once: only agent spans and the root can name the run's agent. */
  readonly agent: string | undefined;
}

function mapTrace(traceId: string, list: readonly { span: OtlpSpan; index: number }[]): MappedTrace {
  const spans: KindedSpan[] = list.map((s) => {
    const kind = kindOf(s.span.attributes);
    return { ...s, kind, agent: kind === "agent" || s.span.parentSpanId === "" ? agentNameOf(s.span, kind) : undefined };
  });
  const rooted = spans.find((s) => s.span.parentSpanId === "");
  const root = rooted?.span;
  const agent = agentOf(spans, rooted);
  let startMs = Infinity;
  for (const s of spans) startMs = Math.min(startMs, s.span.startMs);
  const rootInput = rooted && content(rooted.span, "input", rooted.kind);
  const session = sessionOf(spans, root);
  const runStart: RawEvent = {
    event_type: "run_start",
    sdk_run_id: traceId,
    agent_name: agent.name,
    // Time 0: every export of the trace must derive the same id (its spans differ), and the start sorts first.
    event_id: eventIdFor(`otlp:${traceId}:run:start`, 0),
    occurred_at: isoOfMs(startMs),
    ...(session ? { session_id: session } : {}),
    payload: {
      framework: storable((root ?? spans[0]!.span).scope || "opentelemetry"),
      ...(rootInput !== undefined ? { input: previewOf(rootInput) } : {}),
    },
  };
  const agentFailure = rooted && !isNamedAgent(rooted) ? outermostAgentFailure(spans) : undefined;
  const mapped = spans.map((kinded): MappedSpan => {
    const { span, index, kind } = kinded;
    const failure = failureOf(span);
    const events = [spanEnd(kinded, traceId, failure)];
    if (span === root) {
      const at = isoOfMs(span.endMs);
      const output = content(span, "output", kind);
      const runFailure = failure ?? agentFailure;
      events.push(runFailure
        ? { event_type: "error", sdk_run_id: traceId, event_id: eventIdFor(`otlp:${traceId}:run:error`, span.endMs, RUN_END_RANK), occurred_at: at, span_id: span.spanId, payload: runFailure }
        : {
            event_type: "run_end",
            sdk_run_id: traceId,
            event_id: eventIdFor(`otlp:${traceId}:run:end`, span.endMs, RUN_END_RANK),
            occurred_at: at,
            ...(agent.fromGenAi ? { agent_name: agent.name } : {}),
            payload: output !== undefined ? { output: previewOf(output) } : {},
          });
    }
    return { index, events };
  });
  return { traceId, runStart, spans: mapped };
}

/** Why the span at `index` of an export is refused, for partial_success; undefined when it is taken. */
export function refusalOf(span: OtlpSpan, index: number): string | undefined {
  const why = malformed(span);
  return why && `span ${index}${span.name ? ` (${span.name.slice(0, 80)})` : ""}: ${why}`;
}

/** Maps an export's spans, trace by trace (in the order traces first appear); malformed spans are refused. */
export function mapExport(spans: readonly OtlpSpan[]): MappedExport {
  const refused: { index: number; reason: string }[] = [];
  const byTrace = new Map<string, { span: OtlpSpan; index: number }[]>();
  spans.forEach((span, index) => {
    const reason = refusalOf(span, index);
    if (reason) return void refused.push({ index, reason });
    const list = byTrace.get(span.traceId!);
    if (list) list.push({ span, index });
    else byTrace.set(span.traceId!, [{ span, index }]);
  });
  return { traces: [...byTrace].map(([traceId, list]) => mapTrace(traceId, list)), refused };
}

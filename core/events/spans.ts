/**
 * A run's spans, built from its events (docs/API.md, Spans): the start and end events of a step or tool call
 * share a span_id; an LLM call is a step of kind "llm"; a span sent only as its end event is complete. Events
 * sent without span ids (older clients) are paired as before: a step's end closes the latest open step of that
 * name, a tool call's end the oldest open call of that tool; such spans get the id "e:<start event id>".
 */
import type { StoredEvent } from "../ports/event-store.js";

export interface Span {
  span_id: string;
  parent_span_id: string | null;
  kind: string;
  name: string;
  status: "ok" | "error" | "running";
  started_at: string;
  ended_at: string | null;
  duration_ms: number | null;
  model: string | null;
  provider: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  cached_tokens: number | null;
  reasoning_tokens: number | null;
  cost_usd: number | null;
  input_preview: string | null;
  output_preview: string | null;
  error: string | null;
}

export const PREVIEW_CHARS = 1_000;

/** An LLM call that has ended: a step of kind "llm" with phase "end" (docs/API.md, Spans). */
export const isLlmCallEnd = (e: { readonly event_type: string; readonly payload: Record<string, unknown> }): boolean =>
  e.event_type === "step" && e.payload.kind === "llm" && e.payload.phase === "end";

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null);
const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

/** A value as short text: strings as they are, anything else as JSON, cut to PREVIEW_CHARS. */
export function previewOf(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  let s: string;
  try {
    s = typeof v === "string" ? v : JSON.stringify(v);
  } catch {
    s = String(v);
  }
  return s.length > PREVIEW_CHARS ? `${s.slice(0, PREVIEW_CHARS - 1)}…` : s;
}

/**
 * The most of a span's error that a span carries (the trace, the spans API, live frames): a run of 20,000 spans with
 * 10 KiB errors would otherwise be a 200 MiB page. The whole text stays in the end event (GET /api/runs/{id}).
 */
export const ERROR_PREVIEW_CHARS = 2_000;

const cut = (s: string, max: number): string => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

/** A span's error as text from its end event's `error` (a string, or an object with a type and message), cut to ERROR_PREVIEW_CHARS; null when none. */
export function errorOf(p: Record<string, unknown>): string | null {
  const e = p.error;
  if (e === undefined || e === null || e === "" || e === false) return null;
  if (typeof e === "string") return cut(e, ERROR_PREVIEW_CHARS);
  if (typeof e === "object") {
    const o = e as Record<string, unknown>;
    return cut([str(o.error_type) ?? str(o.type), str(o.error_message) ?? str(o.message)].filter(Boolean).join(": "), ERROR_PREVIEW_CHARS) || previewOf(e);
  }
  return String(e);
}

function openSpan(e: StoredEvent, id: string): Span {
  const p = e.payload;
  const isTool = e.event_type === "tool_call";
  return {
    span_id: id,
    parent_span_id: e.parent_span_id || null,
    kind: isTool ? "tool" : (str(p.kind) ?? "step"),
    name: (isTool ? str(p.tool_name) : str(p.node_name)) ?? "",
    status: "running",
    started_at: e.occurred_at,
    ended_at: null,
    duration_ms: null,
    model: null, provider: null, prompt_tokens: null, completion_tokens: null, total_tokens: null,
    cached_tokens: null, reasoning_tokens: null, cost_usd: null,
    input_preview: str(p.input_preview) ?? (isTool ? null : previewOf(p.input)),
    output_preview: null,
    error: null,
  };
}

function closeSpan(s: Span, e: StoredEvent): void {
  const p = e.payload;
  s.ended_at = e.occurred_at;
  const given = num(p.duration_ms);
  const measured = Date.parse(e.occurred_at) - Date.parse(s.started_at);
  s.duration_ms = given ?? (Number.isFinite(measured) ? Math.max(0, measured) : null);
  if (s.started_at === e.occurred_at && given !== null) s.started_at = new Date(Date.parse(e.occurred_at) - given).toISOString();
  s.error = errorOf(p);
  s.status = s.error ? "error" : "ok";
  s.output_preview = str(p.output_preview) ?? (s.kind === "tool" ? null : previewOf(p.output));
  if (s.input_preview === null) s.input_preview = str(p.input_preview) ?? (s.kind === "tool" ? null : previewOf(p.input));
  if (s.kind === "llm") {
    s.model = str(p.model);
    s.provider = str(p.provider);
    s.prompt_tokens = num(p.prompt_tokens);
    s.completion_tokens = num(p.completion_tokens);
    s.total_tokens = num(p.total_tokens) ?? (s.prompt_tokens !== null || s.completion_tokens !== null ? (s.prompt_tokens ?? 0) + (s.completion_tokens ?? 0) : null);
    s.cached_tokens = num(p.cached_tokens);
    s.reasoning_tokens = num(p.reasoning_tokens);
    s.cost_usd = num(p.cost_usd);
  }
}

export interface BuildSpansOptions {
  /**
   * Keep each span's parent id as sent even when the events given have no such span (a part of a run's events: its
   * parent may be among the others); by default such a parent is null.
   */
  keepParents?: boolean;
  /** Called with each event that opens or closes a span (the first start and the first end of each), in pairing order. */
  onEvent?: (span: Span, e: StoredEvent) => void;
}

/** The spans of one run's events (in processing order), in start order; parents the run does not have → null. */
export function buildSpans(events: readonly StoredEvent[], opts: BuildSpansOptions = {}): Span[] {
  const onEvent = opts.onEvent ?? (() => {});
  const spans: Span[] = [];
  const byId = new Map<string, Span>();
  // Events with span ids: start and end found by id, whatever order they were processed in.
  const paired = new Map<string, { start?: StoredEvent; end?: StoredEvent }>();
  const openSteps = new Map<string, Span[]>(); // events without: paired by name, in processing order
  const openTools = new Map<string, Span[]>();
  for (const e of events) {
    if (e.event_type !== "step" && e.event_type !== "tool_call") continue;
    const p = e.payload;
    const start = p.phase === "start";
    if (e.span_id) {
      const pair = paired.get(e.span_id) ?? {};
      if (start) pair.start ??= e;
      else pair.end ??= e;
      paired.set(e.span_id, pair);
      continue;
    }
    const name = String((e.event_type === "tool_call" ? p.tool_name : p.node_name) ?? "");
    const open = e.event_type === "tool_call" ? openTools : openSteps;
    if (start) {
      const s = openSpan(e, `e:${e.event_id}`);
      spans.push(s);
      byId.set(s.span_id, s);
      onEvent(s, e);
      const list = open.get(name);
      if (list) list.push(s);
      else open.set(name, [s]);
      continue;
    }
    const list = open.get(name) ?? [];
    let s = e.event_type === "tool_call" ? list.shift() : list.pop();
    if (!s) {
      s = openSpan(e, `e:${e.event_id}`); // sent only as its end event
      spans.push(s);
      byId.set(s.span_id, s);
    }
    onEvent(s, e);
    closeSpan(s, e);
  }
  for (const [id, { start, end }] of paired) {
    const s = openSpan((start ?? end)!, id);
    if (start && end && !s.parent_span_id && end.parent_span_id) s.parent_span_id = end.parent_span_id;
    if (start) onEvent(s, start);
    if (end) {
      onEvent(s, end);
      closeSpan(s, end);
    }
    spans.push(s);
    byId.set(id, s);
  }
  if (!opts.keepParents) for (const s of spans) if (s.parent_span_id !== null && !byId.has(s.parent_span_id)) s.parent_span_id = null;
  // Start order; at the same instant a parent before its children.
  const depth = new Map<Span, number>();
  const depthOf = (s: Span): number => {
    let d = depth.get(s);
    if (d !== undefined) return d;
    d = 0;
    for (let p = s.parent_span_id, hops = 0; p !== null && hops < 1000; hops++) {
      d++;
      p = byId.get(p)?.parent_span_id ?? null;
    }
    depth.set(s, d);
    return d;
  };
  // Each start parsed once, not once per comparison (docs/BENCHMARKS.md, "Pages and uploads").
  const startMs = new Map<Span, number>();
  for (const s of spans) startMs.set(s, Date.parse(s.started_at));
  return spans.sort((a, b) => startMs.get(a)! - startMs.get(b)! || depthOf(a) - depthOf(b));
}

/**
 * A span's skeleton: what a trace's row shows, without payloads (docs/API.md, "Trace"). SQL makes those of the spans
 * sent with span ids (stores/runs/trace-rows.ts), saying what core/events/spans.ts says of the same events (the
 * store's test holds them together); skeletonOfSpan makes one of a span buildSpans paired (events sent without ids).
 */
import type { Span } from "./spans.js";

/** One span of a trace, without payloads (docs/API.md, "Trace"). */
export interface SpanSkeleton {
  span_id: string;
  /** As sent: a span whose parent the run lacks is listed as a root, with this id still. */
  parent_span_id: string | null;
  /** 0 for a root; absent where the place is the reader's to find (live updates). */
  depth?: number;
  name: string;
  kind: string;
  status: Span["status"];
  started_at: string;
  duration_ms: number | null;
  /** An LLM call's model, tokens (prompt + completion) and cost; null for other spans and where not sent. */
  model: string | null;
  tokens: number | null;
  cost_usd: number | null;
  /** The latest value of each score given to the span. */
  scores?: { name: string; value: number | boolean | string }[];
}

/** A span built by buildSpans (one sent without a span id, paired by name) as a skeleton. */
export function skeletonOfSpan(s: Span): SpanSkeleton {
  return {
    span_id: s.span_id, parent_span_id: s.parent_span_id, name: s.name, kind: s.kind, status: s.status,
    started_at: s.started_at, duration_ms: s.duration_ms, model: s.model, tokens: s.total_tokens, cost_usd: s.cost_usd,
  };
}

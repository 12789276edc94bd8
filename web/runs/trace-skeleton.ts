/**
 * A run's trace as the trace view reads it: every span's skeleton (core/events/span-skeleton.ts: no payloads) in tree
 * order — each span followed by its subtree, siblings in start order — with its depth. The view pages through this
 * list and draws only the rows on screen; a span's payload is read when it is selected (trace-reads.ts).
 *
 * A span's parent is kept as sent. A span whose parent the run does not have, or whose parents point at each other
 * (a client bug), is listed as a root; a live page nests it once the parent arrives (web/static/trace/model.js), as a
 * later read would.
 */
import { buildSpans } from "../../core/events/spans.js";
import { skeletonOfSpan, type SpanSkeleton } from "../../core/events/span-skeleton.js";
import type { SkeletonRead, SpanCursor } from "../../stores/runs/trace-rows.js";
import { TimeSlice } from "../../core/time-slice.js";

export interface Skeleton {
  /** In tree order. */
  spans: SpanSkeleton[];
  /** The events of spans sent without a span id ("e:<start event id>"): span id → event ids, event id → span id. */
  eventsOfSpan: Map<string, string[]>;
  spanOfEvent: Map<string, string>;
  /** The earliest start and the latest end of the run's spans, ms since epoch; NaN without spans. */
  range: { start: number; end: number };
  /** Where the read that built it stood (stores/runs/trace-rows.ts). */
  cursor: SpanCursor;
}

/**
 * The spans read, in start order: those SQL made (already in order) and, merged in, those sent without span ids,
 * paired here by name (buildSpans); and which events made each of the latter.
 */
export function orderedSkeletons(read: SkeletonRead): { spans: SpanSkeleton[]; eventsOfSpan: Map<string, string[]> } {
  const eventsOfSpan = new Map<string, string[]>();
  if (!read.unpaired.length) return { spans: read.spans, eventsOfSpan };
  const paired = buildSpans(read.unpaired, {
    keepParents: true,
    onEvent: (span, e) => {
      const ids = eventsOfSpan.get(span.span_id);
      if (ids) ids.push(e.event_id);
      else eventsOfSpan.set(span.span_id, [e.event_id]);
    },
  }).map(skeletonOfSpan);
  // Both lists are in start order: merge them (at the same start, the spans with ids first).
  const spans: SpanSkeleton[] = [];
  let j = 0;
  for (const s of read.spans) {
    const t = Date.parse(s.started_at);
    while (j < paired.length && Date.parse(paired[j]!.started_at) < t) spans.push(paired[j++]!);
    spans.push(s);
  }
  while (j < paired.length) spans.push(paired[j++]!);
  return { spans, eventsOfSpan };
}

/** Lays the spans out in tree order, without recursion (a parent chain may be any length), in time slices. */
export async function buildSkeleton(read: SkeletonRead, cursor: SpanCursor): Promise<Skeleton> {
  const { spans, eventsOfSpan } = orderedSkeletons(read);
  const byId = new Map<string, number>();
  for (let i = 0; i < spans.length; i++) byId.set(spans[i]!.span_id, i);
  const children: (number[] | undefined)[] = new Array(spans.length);
  const roots: number[] = [];
  let start = Infinity;
  let end = -Infinity;
  for (let i = 0; i < spans.length; i++) {
    const span = spans[i]!;
    const p = span.parent_span_id === null ? undefined : byId.get(span.parent_span_id);
    if (p === undefined || p === i) roots.push(i);
    else (children[p] ??= []).push(i);
    const at = Date.parse(span.started_at);
    if (Number.isFinite(at)) {
      start = Math.min(start, at);
      end = Math.max(end, at + (span.duration_ms ?? 0));
    }
  }
  const out: SpanSkeleton[] = [];
  const reached = new Uint8Array(spans.length);
  const depthOf = new Int32Array(spans.length);
  const stack: number[] = [];
  const slice = new TimeSlice();
  const visit = async (root: number) => {
    stack.push(root);
    reached[root] = 1;
    while (stack.length) {
      const i = stack.pop()!;
      const span = spans[i]!;
      span.depth = depthOf[i];
      out.push(span);
      const kids = children[i];
      if (kids) {
        for (let k = kids.length - 1; k >= 0; k--) {
          const c = kids[k]!;
          if (reached[c]) continue; // a parent cycle: cut here
          reached[c] = 1;
          depthOf[c] = depthOf[i]! + 1;
          stack.push(c);
        }
      }
      if ((out.length & 4095) === 0 && slice.due()) await slice.next();
    }
  };
  for (const r of roots) await visit(r);
  // Spans whose parents point at each other are reached from no root: each such loop is listed from its first span.
  for (let i = 0; i < spans.length; i++) if (!reached[i]) await visit(i);
  const spanOfEvent = new Map<string, string>();
  for (const [span, ids] of eventsOfSpan) for (const id of ids) spanOfEvent.set(id, span);
  return { spans: out, eventsOfSpan, spanOfEvent, range: { start, end }, cursor };
}

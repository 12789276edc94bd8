/**
 * Turns a run's events (in processing order) into the timeline the run page shows: step and tool_call
 * start/end pairs become one span with a duration; everything else is a point in time. Each item carries its
 * offset from the first event and, for spans, its duration: the page draws the waterfall from them and the run's
 * time range (total_ms) in CSS (app.css, .tl-bar), so a live update that widens the range moves no item's markup.
 */
import type { StoredEvent } from "../../core/ports/event-store.js";

export interface TimelineItem {
  kind: "span" | "point";
  event_type: StoredEvent["event_type"];
  /** node_name / tool_name for spans; a short label for points. */
  name: string;
  /** Events folded into this item: [start] or [start, end] for spans, [event] for points. */
  events: StoredEvent[];
  at: string;
  offset_ms: number;
  /** Spans: end − start (the client's duration_ms when sent, else the occurred_at difference); null while open. */
  duration_ms: number | null;
  open: boolean;
  /** Nesting: spans open when this one started (a tool call inside a step is indented). */
  depth: number;
  /** Points: human_input_received carries the wait since its question. */
  wait_ms?: number | null;
}

const time = (e: StoredEvent): number => Date.parse(e.occurred_at);
const spanName = (e: StoredEvent): string => String(e.payload.node_name ?? e.payload.tool_name ?? "");
const isSpanEvent = (e: StoredEvent): boolean => e.event_type === "step" || e.event_type === "tool_call";

export function buildTimeline(
  events: readonly StoredEvent[],
  opts: { now?: number; live?: boolean } = {},
): { items: TimelineItem[]; t0: number; total_ms: number } {
  const now = opts.now ?? Date.now();
  const t0 = events.length ? Math.min(...events.map(time)) : now;
  const items: TimelineItem[] = [];
  // FIFO per (type, name): parallel calls of one tool pair first-start with first-end.
  const openSpans = new Map<string, TimelineItem[]>();
  let openCount = 0;
  let lastQuestionAt: number | null = null;

  for (const e of events) {
    const at = time(e);
    if (isSpanEvent(e)) {
      const key = `${e.event_type}:${spanName(e)}`;
      if (e.payload.phase === "start") {
        const item: TimelineItem = {
          kind: "span", event_type: e.event_type, name: spanName(e), events: [e], at: e.occurred_at,
          offset_ms: at - t0, duration_ms: null, open: true, depth: openCount,
        };
        items.push(item);
        openCount++;
        const q = openSpans.get(key) ?? [];
        q.push(item);
        openSpans.set(key, q);
        continue;
      }
      const start = openSpans.get(key)?.shift();
      if (start) {
        start.events.push(e);
        start.open = false;
        const d = e.payload.duration_ms;
        start.duration_ms = typeof d === "number" ? d : Math.max(0, at - time(start.events[0]!));
        openCount = Math.max(0, openCount - 1);
        continue;
      }
      // An end without a start (the start was never sent): a span ending here, measured by its own duration_ms.
      const d = typeof e.payload.duration_ms === "number" ? e.payload.duration_ms : null;
      items.push({
        kind: "span", event_type: e.event_type, name: spanName(e), events: [e], at: e.occurred_at,
        offset_ms: at - t0 - (d ?? 0), duration_ms: d, open: false, depth: openCount,
      });
      continue;
    }
    const item: TimelineItem = {
      kind: "point", event_type: e.event_type, name: pointName(e), events: [e], at: e.occurred_at,
      offset_ms: at - t0, duration_ms: null, open: false, depth: 0,
    };
    if (e.event_type === "human_input_requested") lastQuestionAt = at;
    if (e.event_type === "human_input_received") {
      item.wait_ms = lastQuestionAt === null ? null : at - lastQuestionAt;
      lastQuestionAt = null;
    }
    items.push(item);
  }

  const end = events.length ? Math.max(...events.map(time)) : now;
  // While the run is live, open spans extend to now; once it has ended they stop at its last event.
  const horizon = opts.live ? Math.max(end, now) : end;
  return { items, t0, total_ms: Math.max(1, horizon - t0) };
}

function pointName(e: StoredEvent): string {
  switch (e.event_type) {
    case "run_start": return "Run started";
    case "run_end": return "Run finished";
    case "error": return String(e.payload.error_type || "Error");
    case "human_input_requested": return "Waiting for human input";
    case "human_input_received": return "Human input received";
    default: return e.event_type;
  }
}

/**
 * What a live run page is sent after a pushed event: only the timeline items and spans that changed since what the
 * page shows. The page says what it shows by a cursor: the newest event id it was rendered from and how many
 * distinct events that render read (live_state in _run_parts.njk). The server rebuilds the page's view from the
 * events up to the cursor, compares it with the view now, and sends the items whose content differs, the new
 * ones, and the small parts (header, card heads) whole. Where the two views differ in shape — an event stored late
 * with an id below the cursor, an earlier start time that moves every bar, a span whose parent arrived after it,
 * a status change — that part is sent whole, as on a first load.
 */
import { ValidationError } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import type { StoredEvent } from "../../core/ports/event-store.js";
import { buildSpans } from "../../core/events/spans.js";
import { buildTimeline, type TimelineItem } from "./timeline.js";
import { buildSpanTree, type SpanNode, type SpanTree } from "./span-tree.js";

/** What a rendered page read: the newest event id (event ids are UUIDv7, ordered as lowercase text) and how many. */
export interface LiveCursor {
  cursor: string;
  n: number;
}

/** A delta request: the page's cursor and the run status it shows. */
export interface SinceQuery extends LiveCursor {
  status: string;
}

/** The cursor of a render made from these event lists (they may overlap: a page's events and the trace's). */
export function cursorOf(...lists: readonly (readonly StoredEvent[])[]): LiveCursor {
  const ids = new Set<string>();
  let cursor = "";
  for (const list of lists) {
    for (const e of list) {
      const id = e.event_id.toLowerCase();
      ids.add(id);
      if (id > cursor) cursor = id;
    }
  }
  return { cursor, n: ids.size };
}

/** `since`, `n` and `st` of a live fetch, or null for a whole fragment; a malformed one is a 422 naming it. */
export function parseSince(q: Record<string, unknown>): SinceQuery | null {
  const first = (v: unknown) => (Array.isArray(v) ? v[0] : v);
  const since = first(q.since);
  if (since === undefined || since === "") return null;
  const cursor = String(since).toLowerCase();
  if (!isUuid(cursor)) throw new ValidationError({ message: "since must be an event_id", field: "since" });
  const n = Number(first(q.n));
  if (!Number.isSafeInteger(n) || n < 0) throw new ValidationError({ message: "n must be a count of events", field: "n" });
  return { cursor, n, status: String(first(q.st) ?? "") };
}

/** The events a page with this cursor was rendered from, if it is still what the store holds up to the cursor. */
export function eventsUpTo(since: LiveCursor, lists: readonly (readonly StoredEvent[])[]): StoredEvent[][] | null {
  const upTo = lists.map((l) => l.filter((e) => e.event_id.toLowerCase() <= since.cursor));
  return cursorOf(...upTo).n === since.n ? upTo : null;
}

export type TimelineDelta =
  | { full: true }
  | { full: false; changed: TimelineItem[]; added: TimelineItem[] };

const itemPrint = (i: TimelineItem): string =>
  JSON.stringify([i.events.map((e) => e.event_id), i.open, i.duration_ms, i.wait_ms ?? null, i.depth, i.offset_ms, i.name]);

/**
 * The timeline's items in processing order of their first event, so new items follow the page's; an item the page
 * shows changes when its end event arrives.
 */
export function diffTimeline(
  before: { items: readonly TimelineItem[]; t0: number },
  now: { items: readonly TimelineItem[]; t0: number },
): TimelineDelta {
  if (before.items.length && before.t0 !== now.t0) return { full: true };
  const changed: TimelineItem[] = [];
  for (let i = 0; i < before.items.length; i++) {
    const was = before.items[i]!;
    const is = now.items[i];
    if (!is || is.events[0]!.event_id !== was.events[0]!.event_id) return { full: true };
    if (itemPrint(is) !== itemPrint(was)) changed.push(is);
  }
  return { full: false, changed, added: now.items.slice(before.items.length) };
}

/**
 * A span part: `replace` re-renders a span the page shows without its children (the page keeps its own and moves
 * them in); `insert` adds a new span with its subtree under `parent` (null: a root), before the sibling `before`.
 */
export interface SpanPart {
  node: SpanNode;
  mode: "replace" | "insert";
  parent: string | null;
  before: string | null;
}

export type TreeDelta = { full: true } | { full: false; parts: SpanPart[] };

const nodePrint = (n: SpanNode): string => JSON.stringify([n.span, n.totals, n.depth, n.at, n.len, n.children.length > 0]);

interface Shown {
  node: SpanNode;
  parent: string | null;
}

/** The spans a tree renders (after its depth cap and budget), by id, with the id of the span they are listed under. */
function shownSpans(tree: SpanTree): { byId: Map<string, Shown>; children: Map<string | null, string[]> } {
  const byId = new Map<string, Shown>();
  const children = new Map<string | null, string[]>([[null, tree.roots.map((r) => r.span.span_id)]]);
  const stack: Shown[] = tree.roots.map((node) => ({ node, parent: null }));
  while (stack.length) {
    const s = stack.pop()!;
    byId.set(s.node.span.span_id, s);
    children.set(s.node.span.span_id, s.node.children.map((c) => c.span.span_id));
    for (const c of s.node.children) stack.push({ node: c, parent: s.node.span.span_id });
  }
  return { byId, children };
}

export function diffTree(before: SpanTree, now: SpanTree): TreeDelta {
  if (before.count === 0 || before.t0 !== now.t0) return { full: true };
  const was = shownSpans(before);
  const is = shownSpans(now);
  for (const [id, s] of was.byId) {
    if (is.byId.get(id)?.parent !== s.parent) return { full: true };
  }
  // The spans the page lists under each parent must keep their order (new ones may come between them).
  for (const [parent, ids] of was.children) {
    const kept = (is.children.get(parent) ?? []).filter((id) => was.byId.has(id));
    if (kept.length !== ids.length || kept.some((id, i) => id !== ids[i])) return { full: true };
  }
  const parts: SpanPart[] = [];
  // Tree order, so a parent is in place before the spans inserted under it.
  const visit = (siblings: readonly SpanNode[], parent: string | null) => {
    siblings.forEach((node, i) => {
      const id = node.span.span_id;
      const old = was.byId.get(id);
      if (!old) {
        const before = siblings.slice(i + 1).find((s) => was.byId.has(s.span.span_id))?.span.span_id ?? null;
        parts.push({ node, mode: "insert", parent, before });
        return; // its subtree is rendered with it
      }
      if (nodePrint(old.node) !== nodePrint(node)) parts.push({ node, mode: "replace", parent, before: null });
      visit(node.children, id);
    });
  };
  visit(now.roots, null);
  return { full: false, parts };
}

/**
 * The delta for a page at `since` (null: send the page whole): `events` are the timeline page's, `spanEvents` the
 * trace's, `now` the views built from them.
 */
export function liveDelta(
  since: SinceQuery,
  run: { status: string },
  read: { events: readonly StoredEvent[]; spanEvents: readonly StoredEvent[]; live: boolean },
  now: { timeline: { items: readonly TimelineItem[]; t0: number }; tree: SpanTree },
): { timeline: TimelineDelta; tree: TreeDelta } | null {
  if (since.status !== run.status) return null;
  const upTo = eventsUpTo(since, [read.events, read.spanEvents]);
  if (!upTo) return null;
  const [events, spanEvents] = upTo as [StoredEvent[], StoredEvent[]];
  return {
    timeline: diffTimeline(buildTimeline(events, { live: read.live }), now.timeline),
    tree: diffTree(buildSpanTree(buildSpans(spanEvents), { live: read.live }), now.tree),
  };
}

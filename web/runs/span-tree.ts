/**
 * The run page's trace: the run's spans (core/events/spans.ts) as a tree waterfall. Each node carries its start and
 * duration in ms (the page's CSS draws its bar over the tree's total_ms), its depth, and the totals of its subtree (LLM calls,
 * tokens, cost), so a collapsed node still says what it holds. Rendered as nested lists with <details>, so
 * collapsing and expanding work without JavaScript.
 */
import type { Span } from "../../core/events/spans.js";

export interface SpanNode {
  span: Span;
  depth: number;
  children: SpanNode[];
  /** Start, from the trace's first span, and duration in ms (null while running): the page's CSS draws the bar. */
  at: number;
  len: number | null;
  totals: { llm_calls: number; prompt_tokens: number; completion_tokens: number; cost_usd: number };
}

export interface SpanTree {
  roots: SpanNode[];
  count: number;
  /** Spans rendered: the first ones in tree order within MAX_TREE_SPANS and MAX_TREE_CHARS (totals count them all). */
  shown: number;
  t0: number;
  total_ms: number;
  /** Spans deeper than MAX_TREE_DEPTH, listed flat under their ancestor at that depth. */
  flattened: number;
}

/**
 * The deepest level rendered as nesting: the page nests one list per level, so a parent chain thousands deep (a
 * client bug, or an attack) would nest thousands of elements and recurse as deep in the template. Deeper spans are
 * listed flat, in tree order, under their ancestor at this depth.
 */
export const MAX_TREE_DEPTH = 40;

/** The most spans a page renders, and about the most characters of their text and markup (1.5 MiB). */
export const MAX_TREE_SPANS = 2_000;
export const MAX_TREE_CHARS = 1_536 * 1024;
/** The markup of one rendered span, about, besides its texts. */
const SPAN_MARKUP_CHARS = 700;
const spanChars = (s: Span): number =>
  SPAN_MARKUP_CHARS + s.name.length + (s.error?.length ?? 0) + (s.input_preview?.length ?? 0) + (s.output_preview?.length ?? 0);

/** Keeps the nodes that come first in tree order within the budget (their subtrees' totals stay whole); how many. */
function keepFirst(roots: SpanNode[], maxSpans: number, maxChars: number): number {
  const kept = new Set<SpanNode>();
  let chars = 0;
  const stack = [...roots].reverse();
  while (stack.length) {
    const n = stack.pop()!;
    chars += spanChars(n.span);
    if (kept.size >= maxSpans || (chars > maxChars && kept.size > 0)) break;
    kept.add(n);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
  }
  const keep = (list: SpanNode[]) => list.filter((c) => kept.has(c));
  roots.splice(0, roots.length, ...keep(roots));
  for (const n of kept) n.children = keep(n.children);
  return kept.size;
}

const addSpan = (n: SpanNode) => {
  if (n.span.kind !== "llm" || n.span.status === "running") return;
  n.totals.llm_calls += 1;
  n.totals.prompt_tokens += n.span.prompt_tokens ?? 0;
  n.totals.completion_tokens += n.span.completion_tokens ?? 0;
  n.totals.cost_usd += n.span.cost_usd ?? 0;
};
const addTotals = (to: SpanNode, from: SpanNode) => {
  to.totals.llm_calls += from.totals.llm_calls;
  to.totals.prompt_tokens += from.totals.prompt_tokens;
  to.totals.completion_tokens += from.totals.completion_tokens;
  to.totals.cost_usd += from.totals.cost_usd;
};

/**
 * Sets depths and subtree totals below `root`, without recursion (a chain may be any length). A child already
 * reached is a parent cycle in client ids: it is cut, not followed.
 */
function walk(root: SpanNode, reached: Set<SpanNode>): void {
  root.depth = 0;
  reached.add(root);
  const stack: { node: SpanNode; next: number }[] = [{ node: root, next: 0 }];
  while (stack.length) {
    const top = stack[stack.length - 1]!;
    if (top.next === 0) {
      top.node.children = top.node.children.filter((c) => !reached.has(c));
      for (const c of top.node.children) reached.add(c);
      addSpan(top.node);
    }
    const child = top.node.children[top.next++];
    if (child) {
      child.depth = top.node.depth + 1;
      stack.push({ node: child, next: 0 });
    } else {
      stack.pop();
      if (stack.length) addTotals(stack[stack.length - 1]!.node, top.node);
    }
  }
}

/** Lists the descendants of nodes at MAX_TREE_DEPTH flat under them; how many were moved. */
function flattenDeep(roots: SpanNode[]): number {
  let moved = 0;
  const stack = [...roots];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.depth < MAX_TREE_DEPTH) {
      stack.push(...n.children);
      continue;
    }
    const flat: SpanNode[] = [];
    const below = [...n.children].reverse();
    while (below.length) {
      const d = below.pop()!;
      flat.push(d);
      for (let i = d.children.length - 1; i >= 0; i--) below.push(d.children[i]!);
      d.children = [];
      d.depth = MAX_TREE_DEPTH + 1;
    }
    n.children = flat;
    moved += flat.length;
  }
  return moved;
}

export function buildSpanTree(
  spans: readonly Span[],
  opts: { now?: number; live?: boolean; maxSpans?: number; maxChars?: number } = {},
): SpanTree {
  const now = opts.now ?? Date.now();
  // Loops, not Math.min(...spread): a spread of 100,000 values overflows the call stack.
  let t0 = Infinity;
  let last = -Infinity;
  for (const s of spans) {
    const start = Date.parse(s.started_at);
    const end = s.ended_at ? Date.parse(s.ended_at) : NaN;
    if (Number.isFinite(start)) { t0 = Math.min(t0, start); last = Math.max(last, start); }
    if (Number.isFinite(end)) last = Math.max(last, end);
  }
  if (!Number.isFinite(t0)) t0 = now;
  last = Math.max(t0, last);
  const horizon = opts.live ? Math.max(last, now) : last;
  const total = Math.max(1, horizon - t0);

  const nodes = new Map<string, SpanNode>();
  for (const s of spans) {
    const start = Date.parse(s.started_at);
    const at = Number.isFinite(start) ? start - t0 : 0;
    const end = s.ended_at ? Date.parse(s.ended_at) : NaN;
    const len = Number.isFinite(end) ? Math.max(0, end - t0 - at) : null;
    nodes.set(s.span_id, { span: s, depth: 0, children: [], at, len, totals: { llm_calls: 0, prompt_tokens: 0, completion_tokens: 0, cost_usd: 0 } });
  }
  const roots: SpanNode[] = [];
  for (const s of spans) {
    const node = nodes.get(s.span_id)!;
    const parent = s.parent_span_id ? nodes.get(s.parent_span_id) : undefined;
    if (parent && parent !== node) parent.children.push(node);
    else roots.push(node);
  }
  const reached = new Set<SpanNode>();
  for (const r of roots) walk(r, reached);
  // Spans whose parents point at each other (a client bug) are reached from no root: show them at the top.
  for (const n of nodes.values()) {
    if (reached.has(n)) continue;
    roots.push(n);
    walk(n, reached);
  }
  const flattened = flattenDeep(roots);
  const shown = keepFirst(roots, opts.maxSpans ?? MAX_TREE_SPANS, opts.maxChars ?? MAX_TREE_CHARS);
  return { roots, count: spans.length, shown, t0, total_ms: total, flattened };
}

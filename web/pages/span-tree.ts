/**
 * The run page's trace: the run's spans (core/events/spans.ts) as a tree waterfall. Each node carries its bar
 * (offset and width in percent of the run's time range), its depth, and the totals of its subtree (LLM calls,
 * tokens, cost), so a collapsed node still says what it holds. Rendered as nested lists with <details>, so
 * collapsing and expanding work without JavaScript.
 */
import type { Span } from "../../core/events/spans.js";
import { clampPct } from "./timeline.js";

export interface SpanNode {
  span: Span;
  depth: number;
  children: SpanNode[];
  bar: { left: number; width: number };
  totals: { llm_calls: number; prompt_tokens: number; completion_tokens: number; cost_usd: number };
}

export interface SpanTree {
  roots: SpanNode[];
  count: number;
  total_ms: number;
}


export function buildSpanTree(spans: readonly Span[], opts: { now?: number; live?: boolean } = {}): SpanTree {
  const now = opts.now ?? Date.now();
  const starts = spans.map((s) => Date.parse(s.started_at)).filter(Number.isFinite);
  const ends = spans.map((s) => (s.ended_at ? Date.parse(s.ended_at) : NaN)).filter(Number.isFinite);
  const t0 = starts.length ? Math.min(...starts) : now;
  const last = Math.max(t0, ...starts, ...ends);
  const horizon = opts.live ? Math.max(last, now) : last;
  const total = Math.max(1, horizon - t0);

  const nodes = new Map<string, SpanNode>();
  for (const s of spans) {
    const start = Date.parse(s.started_at);
    const end = s.ended_at ? Date.parse(s.ended_at) : horizon;
    const left = clampPct(((start - t0) / total) * 100);
    const width = Math.max(0.4, Math.min(100 - left, clampPct(((end - start) / total) * 100)));
    nodes.set(s.span_id, { span: s, depth: 0, children: [], bar: { left, width }, totals: { llm_calls: 0, prompt_tokens: 0, completion_tokens: 0, cost_usd: 0 } });
  }
  const roots: SpanNode[] = [];
  for (const s of spans) {
    const node = nodes.get(s.span_id)!;
    const parent = s.parent_span_id ? nodes.get(s.parent_span_id) : undefined;
    if (parent && parent !== node) parent.children.push(node);
    else roots.push(node);
  }
  const visit = (n: SpanNode, depth: number, path: Set<SpanNode>): void => {
    n.depth = depth;
    if (n.span.kind === "llm" && n.span.status !== "running") {
      n.totals.llm_calls += 1;
      n.totals.prompt_tokens += n.span.prompt_tokens ?? 0;
      n.totals.completion_tokens += n.span.completion_tokens ?? 0;
      n.totals.cost_usd += n.span.cost_usd ?? 0;
    }
    path.add(n);
    n.children = n.children.filter((c) => !path.has(c)); // a parent cycle in client ids is cut, not followed
    for (const c of n.children) {
      visit(c, depth + 1, path);
      n.totals.llm_calls += c.totals.llm_calls;
      n.totals.prompt_tokens += c.totals.prompt_tokens;
      n.totals.completion_tokens += c.totals.completion_tokens;
      n.totals.cost_usd += c.totals.cost_usd;
    }
    path.delete(n);
  };
  for (const r of roots) visit(r, 0, new Set());
  // Spans whose parents point at each other (a client bug) are reached from no root: show them at the top.
  const reached = new Set<SpanNode>();
  const mark = (n: SpanNode): void => { reached.add(n); n.children.forEach(mark); };
  roots.forEach(mark);
  for (const n of nodes.values()) {
    if (reached.has(n)) continue;
    roots.push(n);
    visit(n, 0, new Set());
    mark(n);
  }
  return { roots, count: spans.length, total_ms: total };
}

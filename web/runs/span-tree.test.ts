import { describe, expect, it } from "vitest";
import type { Span } from "../../core/events/spans.js";
import { buildSpanTree, MAX_TREE_CHARS, MAX_TREE_SPANS, type SpanNode } from "./span-tree.js";

const span = (id: string, parent: string | null, i: number, extra: Partial<Span> = {}): Span => ({
  span_id: id, parent_span_id: parent, kind: "llm", name: `span ${id}`, status: "ok",
  started_at: new Date(1_700_000_000_000 + i).toISOString(), ended_at: new Date(1_700_000_000_000 + i + 1).toISOString(), duration_ms: 1,
  model: "m", provider: "p", prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, cached_tokens: null, reasoning_tokens: null, cost_usd: 0.001,
  input_preview: null, output_preview: null, error: null, ...extra,
});

const rendered = (roots: SpanNode[]): number => roots.reduce((n, r) => n + 1 + rendered(r.children), 0);

describe("the run page's span tree", () => {
  it(`renders the first ${MAX_TREE_SPANS} spans in tree order, and the totals still count every span`, () => {
    const spans = [span("root", null, 0), ...Array.from({ length: 4_999 }, (_, i) => span(`c${i}`, "root", i + 1))];
    const tree = buildSpanTree(spans);
    expect(tree.count).toBe(5_000);
    expect(tree.shown).toBe(MAX_TREE_SPANS);
    expect(rendered(tree.roots)).toBe(MAX_TREE_SPANS);
    expect(tree.roots[0]!.children.map((c) => c.span.span_id).slice(0, 2)).toEqual(["c0", "c1"]);
    expect(tree.roots[0]!.totals.llm_calls).toBe(5_000);
  });

  it("stops within the character budget when spans carry long texts, and always shows the first span", () => {
    const error = "E".repeat(2_000);
    const spans = Array.from({ length: 3_000 }, (_, i) => span(`s${i}`, null, i, { error, status: "error", input_preview: "i".repeat(1_000), output_preview: "o".repeat(1_000) }));
    const tree = buildSpanTree(spans);
    expect(tree.shown).toBeLessThan(MAX_TREE_SPANS);
    expect(tree.shown * (4_000 + 700)).toBeLessThanOrEqual(MAX_TREE_CHARS);
    expect(tree.shown).toBeGreaterThan(MAX_TREE_CHARS / (4_000 + 700) - 2);
    expect(buildSpanTree([span("huge", null, 0, { error: "E".repeat(5_000_000) })]).shown).toBe(1);
  });
});

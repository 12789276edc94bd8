/**
 * The browser's model of a trace (web/static/trace/model.js), without a browser: spans placed under their parents
 * whatever order they come in (a span waits as a root for a parent still to come), loops cut, folds and the kind
 * filter in the rows shown, subtree totals, name search in tree order.
 */
import { describe, expect, it } from "vitest";
import { TraceModel } from "../static/trace/model.js";
import type { SpanSkeleton } from "../../core/events/span-skeleton.js";

const span = (id: string, parent: string | null, ms: number, extra: Partial<SpanSkeleton> = {}): SpanSkeleton => ({
  span_id: id, parent_span_id: parent, name: id, kind: "step", status: "ok", started_at: new Date(Date.UTC(2026, 0, 1) + ms).toISOString(),
  duration_ms: 5, model: null, tokens: null, cost_usd: null, ...extra,
});
const shown = (m: TraceModel, kind = "") => {
  const { rows, depths } = m.visible(kind);
  return [...rows].map((p, i) => `${"  ".repeat(depths[i]!)}${m.at(p).span_id}`);
};

describe("the trace's model in the browser", () => {
  it("places spans under their parents in start order, whatever order they come in", () => {
    const m = new TraceModel();
    for (const s of [span("b2", "a", 30), span("b1", "a", 20), span("c", "b1", 25), span("a", null, 10), span("z", null, 5)]) m.upsert(s);
    expect(shown(m)).toEqual(["z", "a", "  b1", "    c", "  b2"]);
    // A span that changes its start moves among its siblings; one that changes in place stays.
    expect(m.upsert(span("b2", "a", 15))).toBe("moved");
    expect(m.upsert(span("c", "b1", 25, { status: "error" }))).toBe("changed");
    expect(shown(m)).toEqual(["z", "a", "  b2", "  b1", "    c"]);
  });

  it("never makes a loop of parents: the span that would close it stays a root", () => {
    const m = new TraceModel();
    m.upsert(span("x", "y", 1));
    m.upsert(span("y", "x", 2));
    expect(shown(m)).toEqual(["x", "  y"]);
    m.upsert(span("self", "self", 3));
    expect(shown(m)).toEqual(["x", "  y", "self"]);
  });

  it("leaves folded subtrees and other kinds out of the rows, sums subtrees, and finds names in tree order", () => {
    const m = new TraceModel();
    m.upsert(span("root", null, 0));
    m.upsert(span("agent", "root", 1));
    m.upsert(span("llm-1", "agent", 2, { kind: "llm", tokens: 100, cost_usd: 0.5, name: "ChatOpenAI" }));
    m.upsert(span("tool", "agent", 3, { kind: "tool", name: "search" }));
    m.upsert(span("llm-2", "root", 4, { kind: "llm", tokens: 10, cost_usd: 0.25, name: "chatopenai" }));
    const totals = m.totals();
    expect([totals.calls[m.positionOf("root")!], totals.tokens[m.positionOf("root")!], totals.cost[m.positionOf("agent")!]]).toEqual([2, 110, 0.5]);
    m.setFolded(m.positionOf("agent")!, true);
    expect(shown(m)).toEqual(["root", "  agent", "  llm-2"]);
    expect(shown(m, "tool")).toEqual(["root", "  agent"]); // the kind's spans and their ancestors, folds applying
    expect(m.reveal(m.positionOf("tool")!)).toBe(true);
    expect(shown(m, "tool")).toEqual(["root", "  agent", "    tool"]);
    expect(m.namesMatching("CHATopen").map((p) => m.at(p).span_id)).toEqual(["llm-1", "llm-2"]);
    // A reload keeps what the reader folded.
    m.setFolded(m.positionOf("agent")!, true);
    m.clear();
    for (const s of [span("root", null, 0), span("agent", "root", 1), span("tool", "agent", 3)]) m.upsert(s);
    expect(shown(m)).toEqual(["root", "  agent"]);
  });
});

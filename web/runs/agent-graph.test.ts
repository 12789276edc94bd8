// The agent graph (web/runs/agent-graph.ts): nodes by kind and name with counts and durations; calls from parent to
// child; handoffs between graph nodes in sequence, a loop counted on one pair of edges however often it went round.
import { describe, expect, it } from "vitest";
import { buildAgentGraph, MAX_GRAPH_NODES, RUN_NODE, type GraphSpan } from "./agent-graph.js";

const t0 = Date.parse("2026-01-01T00:00:00Z");
let clock = 0;
const span = (span_id: string, kind: string, name: string, parent: string | null, duration: number | null = 10, status: GraphSpan["status"] = "ok"): GraphSpan => ({
  span_id, parent_span_id: parent, kind, name, status, started_at: new Date(t0 + clock++ * 100).toISOString(), duration_ms: duration,
});
const edges = (g: ReturnType<typeof buildAgentGraph>) => g.edges.map((e) => `${e.type} ${e.from} → ${e.to} ×${e.count}`).sort();

describe("buildAgentGraph", () => {
  it("a LangGraph ReAct loop (agent → tools → agent … three times round) is drawn once, with counts", () => {
    clock = 0;
    const spans: GraphSpan[] = [];
    for (let i = 0; i < 3; i++) {
      spans.push(span(`agent-${i}`, "step", "agent", null, 100), span(`llm-${i}`, "llm", "ChatOpenAI", `agent-${i}`, 80));
      spans.push(span(`tools-${i}`, "step", "tools", null, 50), span(`tool-${i}`, "tool", "get_weather", `tools-${i}`, 40, i === 1 ? "error" : "ok"));
    }
    spans.push(span("agent-3", "step", "agent", null, 90), span("llm-3", "llm", "ChatOpenAI", "agent-3", 70));
    const g = buildAgentGraph(spans, { runName: "weather-bot" });
    expect(g.nodes.map((n) => [n.id, n.count])).toEqual([[RUN_NODE, 1], ["step:agent", 4], ["llm:ChatOpenAI", 4], ["step:tools", 3], ["tool:get_weather", 3]]);
    expect(g.nodes[0]!.name).toBe("weather-bot");
    expect(edges(g)).toEqual([
      "call run → step:agent ×1",
      "call step:agent → llm:ChatOpenAI ×4",
      "call step:tools → tool:get_weather ×3",
      "handoff step:agent → step:tools ×3",
      "handoff step:tools → step:agent ×3",
    ]);
    const agent = g.nodes.find((n) => n.id === "step:agent")!;
    expect([agent.total_ms, agent.max_ms, agent.span_ids]).toEqual([390, 100, ["agent-0", "agent-1", "agent-2", "agent-3"]]);
    expect(g.nodes.find((n) => n.id === "tool:get_weather")!.errors).toBe(1);
    expect(g.edges.find((e) => e.to === "llm:ChatOpenAI")!.total_ms).toBe(310);
    expect(g.span_count).toBe(14);
  });

  it("agents handing over to each other (a supervisor), a subgraph's own sequence, a node repeating itself", () => {
    clock = 0;
    const g = buildAgentGraph([
      span("s1", "agent", "supervisor", null), span("a1", "agent", "researcher", null), span("s2", "agent", "supervisor", null),
      span("w1", "agent", "writer", null), span("w2", "agent", "writer", null),
      span("sub", "step", "booking", "w2"), span("sub-a", "step", "booking/search", "sub"), span("sub-b", "step", "booking/confirm", "sub"),
      span("r1", "retrieval", "docs", "a1"),
    ]);
    expect(edges(g)).toEqual([
      "call agent:researcher → retrieval:docs ×1",
      "call agent:writer → step:booking ×1",
      "call run → agent:supervisor ×1",
      "call step:booking → step:booking/search ×1",
      "handoff agent:researcher → agent:supervisor ×1",
      "handoff agent:supervisor → agent:researcher ×1",
      "handoff agent:supervisor → agent:writer ×1",
      "handoff agent:writer → agent:writer ×1",
      "handoff step:booking/search → step:booking/confirm ×1",
    ]);
  });

  it("spans still running count no time; a parent the run lacks reads as the top level; no spans: the run alone", () => {
    clock = 0;
    const g = buildAgentGraph([span("x", "step", "plan", "gone", null), span("y", "tool", "search", null, 5)]);
    expect(edges(g)).toEqual(["call run → step:plan ×1", "call run → tool:search ×1"]);
    expect(g.nodes.find((n) => n.id === "step:plan")).toMatchObject({ count: 1, total_ms: 0 });
    expect(buildAgentGraph([])).toEqual({ nodes: [{ id: RUN_NODE, name: "run", kind: "run", count: 1, errors: 0, total_ms: 0, max_ms: 0, span_ids: [] }], edges: [], span_count: 0, omitted_nodes: 0 });
  });

  it("keeps the most frequent nodes past MAX_GRAPH_NODES and says how many it left out", () => {
    clock = 0;
    const spans = [span("hot-1", "tool", "hot", null), span("hot-2", "tool", "hot", null)];
    for (let i = 0; i < MAX_GRAPH_NODES + 20; i++) spans.push(span(`t${i}`, "tool", `tool-${i}`, null));
    const g = buildAgentGraph(spans);
    expect(g.nodes).toHaveLength(MAX_GRAPH_NODES);
    expect(g.omitted_nodes).toBe(22);
    expect(g.nodes.some((n) => n.id === "tool:hot")).toBe(true);
    expect(g.edges.every((e) => g.nodes.some((n) => n.id === e.to))).toBe(true);
  });
});

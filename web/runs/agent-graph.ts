/**
 * A run as a graph of what it is made of (docs/DASHBOARD.md, "The agent as a graph"; GET /api/runs/{id}/graph): one
 * node per distinct thing that ran — a graph node or agent, a tool, a model — however often it ran, and edges for how
 * control moved between them, each with how often it did:
 *   call     a span's parent → the span (a node calls its model and its tools; the run calls its first node)
 *   handoff  one graph node or agent → the next one under the same parent (LangGraph's steps; agents that hand
 *            over to each other). A loop (agent → tools → agent → …) is two edges with their counts, not unrolled.
 * Spans are matched to nodes by kind and name. Pure: built from span skeletons (no payloads), so it costs the same
 * for a run with large messages.
 */
import type { Span } from "../../core/events/spans.js";

export type GraphSpan = Pick<Span, "span_id" | "parent_span_id" | "kind" | "name" | "status" | "started_at" | "duration_ms">;

export interface GraphNode {
  /** `${kind}:${name}`, or "run" for the run itself. */
  readonly id: string;
  readonly name: string;
  /** The spans' kind (step, agent, chain, llm, tool, …), "run" for the run. */
  readonly kind: string;
  /** Spans of this node (1 for the run). */
  count: number;
  errors: number;
  /** Sum and longest of its spans' durations (ms); spans still running count nothing. */
  total_ms: number;
  max_ms: number;
  /** Its first spans, in start order (at most MAX_NODE_SPAN_IDS): what selecting the node selects. */
  readonly span_ids: string[];
}

export interface GraphEdge {
  readonly from: string;
  readonly to: string;
  readonly type: "call" | "handoff";
  count: number;
  /** For calls: the called spans' summed duration (ms). */
  total_ms: number;
}

export interface AgentGraph {
  readonly nodes: GraphNode[];
  readonly edges: GraphEdge[];
  /** Spans the graph was built from. */
  readonly span_count: number;
  /** Distinct nodes left out past MAX_GRAPH_NODES (the least frequent ones), with their edges. */
  readonly omitted_nodes: number;
}

export const RUN_NODE = "run";
/** Nodes a graph shows: past this a drawing is no longer read (a run naming every call differently). */
export const MAX_GRAPH_NODES = 150;
export const MAX_NODE_SPAN_IDS = 100;
/** Kinds that hand control to each other in sequence; the others (models, tools, retrievers) are called. */
const FLOW_KINDS = new Set(["step", "agent", "chain", "plan"]);

const nodeId = (s: GraphSpan): string => `${s.kind}:${s.name}`;

export function buildAgentGraph(spans: readonly GraphSpan[], options: { runName?: string } = {}): AgentGraph {
  const nodes = new Map<string, GraphNode>();
  nodes.set(RUN_NODE, { id: RUN_NODE, name: options.runName || "run", kind: "run", count: 1, errors: 0, total_ms: 0, max_ms: 0, span_ids: [] });
  const edges = new Map<string, GraphEdge>();
  const byId = new Map<string, GraphSpan>();
  for (const s of spans) byId.set(s.span_id, s);

  // Children of each parent (null: the run's top level) in start order.
  const startMs = new Map<GraphSpan, number>();
  for (const s of spans) startMs.set(s, Date.parse(s.started_at));
  const ordered = [...spans].sort((a, b) => (startMs.get(a)! - startMs.get(b)!) || 0);
  const children = new Map<string | null, GraphSpan[]>();
  for (const s of ordered) {
    const parent = s.parent_span_id !== null && byId.has(s.parent_span_id) ? s.parent_span_id : null;
    const list = children.get(parent);
    if (list) list.push(s);
    else children.set(parent, [s]);

    const id = nodeId(s);
    let n = nodes.get(id);
    if (!n) nodes.set(id, (n = { id, name: s.name, kind: s.kind, count: 0, errors: 0, total_ms: 0, max_ms: 0, span_ids: [] }));
    n.count++;
    if (s.status === "error") n.errors++;
    if (s.duration_ms !== null) {
      n.total_ms += s.duration_ms;
      n.max_ms = Math.max(n.max_ms, s.duration_ms);
    }
    if (n.span_ids.length < MAX_NODE_SPAN_IDS) n.span_ids.push(s.span_id);
  }

  const edge = (from: string, to: string, type: GraphEdge["type"], ms: number | null): void => {
    const key = `${type}|${from}|${to}`;
    let e = edges.get(key);
    if (!e) edges.set(key, (e = { from, to, type, count: 0, total_ms: 0 }));
    e.count++;
    if (type === "call" && ms !== null) e.total_ms += ms;
  };
  for (const [parent, list] of children) {
    const from = parent === null ? RUN_NODE : nodeId(byId.get(parent)!);
    let previous: GraphSpan | undefined;
    for (const s of list) {
      if (!FLOW_KINDS.has(s.kind)) {
        edge(from, nodeId(s), "call", s.duration_ms);
        continue;
      }
      if (previous) edge(nodeId(previous), nodeId(s), "handoff", null);
      else edge(from, nodeId(s), "call", s.duration_ms);
      previous = s;
    }
  }
  return limited([...nodes.values()], [...edges.values()], spans.length);
}

/** The MAX_GRAPH_NODES most frequent nodes (the run always) and the edges between them; nodes in first-seen order. */
function limited(nodes: GraphNode[], edges: GraphEdge[], spanCount: number): AgentGraph {
  if (nodes.length <= MAX_GRAPH_NODES) return { nodes, edges, span_count: spanCount, omitted_nodes: 0 };
  const keep = new Set([RUN_NODE, ...nodes.filter((n) => n.id !== RUN_NODE).sort((a, b) => b.count - a.count).slice(0, MAX_GRAPH_NODES - 1).map((n) => n.id)]);
  return {
    nodes: nodes.filter((n) => keep.has(n.id)),
    edges: edges.filter((e) => keep.has(e.from) && keep.has(e.to)),
    span_count: spanCount,
    omitted_nodes: nodes.length - keep.size,
  };
}

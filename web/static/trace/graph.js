// The agent graph of a run (GET /api/runs/{id}/graph; docs/DASHBOARD.md, "The agent as a graph") as SVG: a box per
// node with how often it ran and for how long, an arrow per call or handoff with its count; a loop is drawn once,
// back up the side. Clicking a node (or Enter on it) calls onSelectNode(node): the node's span_ids say which spans.
//
//   renderAgentGraph(container, graph, { onSelectNode })   returns { select(nodeId) }
import { duration } from "../format.js";
import { ensureStyles } from "./messages.js";
import { NODE_H, layoutGraph, nodeWidth, shortLabel } from "./graph-layout.js";

const SVG = "http://www.w3.org/2000/svg";
const svgEl = (tag, attrs = {}, text) => {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = String(text);
  return e;
};

const KIND_LABELS = { run: "run", step: "node", agent: "agent", chain: "chain", plan: "plan", llm: "model", tool: "tool", retrieval: "retrieval", embedding: "embedding" };
const times = (n) => `${n.toLocaleString("en-US")}×`;

/** The node's facts in one line: runs, time, errors. */
function facts(n) {
  if (n.kind === "run") return "run";
  const parts = [times(n.count)];
  if (n.total_ms > 0) parts.push(duration(n.total_ms));
  if (n.errors > 0) parts.push(`${n.errors} error${n.errors === 1 ? "" : "s"}`);
  return parts.join(" · ");
}

function describe(n) {
  if (n.kind === "run") return `${n.name}: the run`;
  const avg = n.count && n.total_ms ? `, ${duration(n.total_ms / n.count)} on average, longest ${duration(n.max_ms)}` : "";
  return `${n.name} (${KIND_LABELS[n.kind] ?? n.kind}): ran ${times(n.count)}${n.total_ms ? `, ${duration(n.total_ms)} in all` : ""}${avg}${n.errors ? `, ${n.errors} failed` : ""}`;
}

function edgeLabel(e) {
  return e.type === "call" && e.total_ms > 0 && e.count > 1 ? `${times(e.count)} · ${duration(e.total_ms)}` : times(e.count);
}

export function renderAgentGraph(container, graph, { onSelectNode } = {}) {
  ensureStyles(new URL("./graph.css", import.meta.url).href);
  container.replaceChildren();
  const wrap = document.createElement("div");
  wrap.className = "rw-graph";
  container.append(wrap);
  if (!graph || !Array.isArray(graph.nodes) || graph.nodes.length <= 1) {
    const p = document.createElement("p");
    p.className = "rw-graph-empty";
    p.textContent = "No spans yet: the graph shows the run's nodes, agents, tools and models as they run.";
    wrap.append(p);
    return { select() {} };
  }
  const kindOf = (n) => (n.kind === "run" ? "" : KIND_LABELS[n.kind] ?? n.kind);
  // The name on the first line; the facts and, right-aligned, the kind on the second.
  const layout = layoutGraph(graph, { widthOf: (n) => nodeWidth(shortLabel(n.name), `${facts(n)}   ${kindOf(n)}`) });
  const svg = svgEl("svg", { width: layout.width, height: layout.height, viewBox: `0 0 ${layout.width} ${layout.height}`, role: "group", "aria-label": "Agent graph" });
  const defs = svgEl("defs");
  for (const type of ["call", "handoff"]) {
    const size = type === "handoff" ? 5 : 7; // markers scale with the stroke, and a handoff's is thicker
    const marker = svgEl("marker", { id: `rw-arrow-${type}`, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: size, markerHeight: size, orient: "auto-start-reverse" });
    marker.append(svgEl("path", { d: "M 0 0 L 10 5 L 0 10 z", class: `rw-arrow rw-arrow-${type}` }));
    defs.append(marker);
  }
  svg.append(defs);

  const edgeLayer = svgEl("g", { class: "rw-edges" });
  for (const e of layout.edges) {
    const g = svgEl("g", { class: `rw-gedge rw-gedge-${e.type}${e.back ? " is-back" : ""}`, "data-from": e.from, "data-to": e.to, "data-type": e.type, "data-count": e.count });
    g.append(svgEl("title", {}, `${e.type === "call" ? "calls" : "hands over to"} · ${times(e.count)}`));
    g.append(svgEl("path", { d: e.d, "marker-end": `url(#rw-arrow-${e.type})` }));
    const label = edgeLabel(e);
    const w = label.length * 6.4 + 8;
    g.append(svgEl("rect", { x: e.lx - w / 2, y: e.ly - 8, width: w, height: 16, rx: 8, class: "rw-gedge-label-bg" }));
    g.append(svgEl("text", { x: e.lx, y: e.ly + 4, "text-anchor": "middle", class: "rw-gedge-label" }, label));
    edgeLayer.append(g);
  }
  svg.append(edgeLayer);

  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const nodeEls = new Map();
  const select = (id) => {
    for (const [nid, el] of nodeEls) el.classList.toggle("is-selected", nid === id);
  };
  for (const box of layout.nodes) {
    const n = byId.get(box.id);
    const g = svgEl("g", { class: `rw-gnode${n.errors ? " has-errors" : ""}`, "data-node": n.id, "data-kind": n.kind, "data-count": n.count, transform: `translate(${box.x} ${box.y})`, tabindex: 0, role: "button", "aria-label": describe(n) });
    g.append(svgEl("title", {}, describe(n)));
    g.append(svgEl("rect", { width: box.w, height: NODE_H, rx: 8, class: "rw-gnode-box" }));
    g.append(svgEl("text", { x: 10, y: 18, class: "rw-gnode-name" }, shortLabel(n.name)));
    g.append(svgEl("text", { x: box.w - 8, y: 35, "text-anchor": "end", class: "rw-gnode-kind" }, kindOf(n)));
    g.append(svgEl("text", { x: 10, y: 35, class: "rw-gnode-facts" }, facts(n)));
    const choose = () => {
      select(n.id);
      onSelectNode?.(n);
    };
    g.addEventListener("click", choose);
    g.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") {
        ev.preventDefault();
        choose();
      }
    });
    nodeEls.set(n.id, g);
    svg.append(g);
  }
  wrap.append(svg);
  const legend = document.createElement("p");
  legend.className = "rw-graph-legend";
  const omitted = graph.omitted_nodes ? ` · ${graph.omitted_nodes} rarer nodes not shown` : "";
  legend.textContent = `${graph.span_count.toLocaleString("en-US")} spans · solid arrows: handoffs between nodes · thin arrows: calls · counts on the arrows${omitted}`;
  container.append(legend);
  return { select };
}

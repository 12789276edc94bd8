// The run page's agent graph (web/runs/views/_agent_graph.njk): fetched and drawn when the reader opens it, fetched
// again (at most every 2 s) while it is open and the run's events arrive. Selecting a node announces its spans as a
// `runwatch:select-spans` event ({detail: {node, span_ids}}) for the trace to select, and scrolls to the first of
// them when the trace shows it. The drawing code (graph.js, graph-layout.js) is imported when the graph is first
// drawn: imported with this module, it held back the page's later module scripts — the trace view's among them,
// and with it the tree's first read — by two more round trips.
import { onReconnect, onRunEvents } from "../live.js";

const root = document.getElementById("agent-graph");
const body = root?.querySelector(".agent-graph-body");
const REFRESH_MS = 2000;
let view = null;
let selected = null;
let loaded = false;
let timer = null;
let last = 0;

function onSelectNode(node) {
  selected = node.id;
  document.dispatchEvent(new CustomEvent("runwatch:select-spans", { detail: { node, span_ids: node.span_ids } }));
  const first = node.span_ids[0] && document.querySelector(`[data-span-id="${CSS.escape(node.span_ids[0])}"]`);
  first?.scrollIntoView({ block: "center", behavior: "smooth" });
}

async function load() {
  last = Date.now();
  try {
    const res = await fetch(root.dataset.graphUrl, { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const [{ graph }, { renderAgentGraph }] = await Promise.all([res.json(), import("./graph.js")]);
    view = renderAgentGraph(body, graph, { onSelectNode });
    if (selected) view.select(selected);
    loaded = true;
  } catch (err) {
    const p = document.createElement("p");
    p.className = "subtle small";
    p.textContent = `The graph could not be loaded (${err.message}).`;
    body.replaceChildren(p);
  }
}

function refreshSoon() {
  if (!root.open || timer) return;
  timer = setTimeout(() => {
    timer = null;
    load();
  }, Math.max(0, last + REFRESH_MS - Date.now()));
}

if (root && body) {
  root.addEventListener("toggle", () => {
    if (root.open && !loaded) load();
  });
  if (root.open) load();
  onRunEvents((run) => {
    if (run.sdk_run_id === root.dataset.run) refreshSoon();
  });
  onReconnect(refreshSoon);
}

// The run page's trace view: the span tree (view.js over model.js) beside the selected span's panel (panel.js), with
// search (search.js), the keyboard (keys.js), the toolbar (fold all, a kind filter, tree or waterfall),
// `#span=<id>` links, and the agent graph's nodes (graph-view.js announces a node's spans). The tree is read a page at
// a time (loader.js); run.js feeds it live changes.
import { duration } from "../format.js";
import { bindKeys } from "./keys.js";
import { TreeLoader } from "./loader.js";
import { TraceModel } from "./model.js";
import { Panel } from "./panel.js";
import { TraceSearch } from "./search.js";
import { TreeView } from "./view.js";

const $ = (id) => document.getElementById(id);
const isLive = (run) => run?.status === "running" || run?.status === "waiting_for_input";
const hashSpan = () => {
  const m = /^#span=(.*)$/.exec(location.hash);
  if (!m) return null;
  try { return decodeURIComponent(m[1]); } catch { return null; }
};

export function startTraceView(section) {
  const base = document.body.dataset.base ?? "";
  const runId = section.dataset.run;
  const model = new TraceModel();
  let run = null;
  let selected = null; // a span id, "" for the run, null for none
  let wanted = hashSpan();

  const panel = new Panel($("trace-panel"), { base, runId, onClose: () => select(null) });
  const view = new TreeView($("tv-scroll"), $("tv-spacer"), model, {
    run: () => run,
    live: () => isLive(run),
    onActivate: (pos) => select(pos === -1 ? "" : model.at(pos).span_id),
    onToggle: (pos) => toggle(pos),
  });

  function select(id, { scroll = false } = {}) {
    selected = id;
    view.selected = id;
    section.classList.toggle("tp-open", id !== null);
    const hash = id ? `#span=${encodeURIComponent(id)}` : "";
    if (location.hash !== hash) history.replaceState(null, "", `${location.pathname}${location.search}${hash}`);
    if (id) {
      const pos = model.positionOf(id);
      if (pos !== undefined && model.reveal(pos)) view.refresh();
      const row = pos === undefined ? -1 : view.rowOf(pos);
      if (row >= 0) view.moveTo(row, { center: scroll });
    } else if (id === "") view.moveTo(0);
    view.invalidate();
    panel.show(id ?? "");
  }

  function toggle(pos, folded) {
    if (pos === -1) view.runFolded = folded ?? !view.runFolded;
    else model.setFolded(pos, folded ?? !model.isFolded(pos));
    view.refresh();
  }

  /** A match of the search: shown as if clicked, with its ancestors unfolded and the kind filter off if it hides it. */
  function goTo(pos) {
    if (pos === -1) return select("", { scroll: true });
    view.runFolded = false;
    if (view.kind && model.at(pos).kind !== view.kind && !view.rows.includes(pos)) {
      view.kind = "";
      $("trace-kind").value = "";
    }
    select(model.at(pos).span_id, { scroll: true });
  }

  const search = new TraceSearch({
    input: $("trace-search"), count: $("trace-matches"), base, runId, model, goTo,
    changed: (matches) => { view.matches = matches; view.invalidate(); },
  });
  $("trace-next").addEventListener("click", () => search.step(1));
  $("trace-prev").addEventListener("click", () => search.step(-1));
  bindKeys({
    view, model, toggle, search: $("trace-search"), clearSearch: () => search.clear(),
    open: (pos) => select(pos === -1 ? "" : model.at(pos).span_id), close: () => select(null),
  });

  $("trace-expand").addEventListener("click", () => { model.folded.clear(); model.dirty = true; view.runFolded = false; view.refresh(); });
  $("trace-collapse").addEventListener("click", () => {
    for (let i = 0; i < model.size; i++) if (model.hasKids(i)) model.folded.add(model.at(i).span_id);
    view.refresh();
  });
  const kindSelect = $("trace-kind");
  kindSelect.addEventListener("change", () => { view.kind = kindSelect.value; view.refresh(); });
  const views = { tree: $("trace-view-tree"), waterfall: $("trace-view-waterfall") };
  for (const [name, button] of Object.entries(views)) {
    button.addEventListener("click", () => {
      section.classList.toggle("tv-waterfall", name === "waterfall");
      for (const [n, b] of Object.entries(views)) {
        b.setAttribute("aria-pressed", String(n === name));
        b.classList.toggle("btn-ghost", n !== name);
      }
      axis();
    });
  }

  function axis() {
    const { total } = view.range();
    // Thirds: a narrow axis has room for four labels, not five.
    const ticks = [0, 1 / 3, 2 / 3, 1].map((f) => {
      const t = document.createElement("span");
      t.style.left = `${f * 100}%`;
      t.textContent = duration(total * f);
      return t;
    });
    const box = document.createElement("span");
    box.className = "tv-axis-ticks";
    box.append(...ticks);
    $("tv-axis").replaceChildren(box);
  }

  function kinds() {
    const have = new Set([...kindSelect.options].map((o) => o.value));
    for (const k of [...model.kinds].sort()) {
      if (have.has(k)) continue;
      const o = document.createElement("option");
      o.value = k;
      o.textContent = k;
      kindSelect.append(o);
    }
  }

  /** After spans came: the rows again, the kinds, the count, and a span a link names once it is there. */
  function grew(loaded, total) {
    view.refresh();
    kinds();
    axis();
    $("trace-count").textContent = `${total.toLocaleString("en-US")} span${total === 1 ? "" : "s"}${loaded < total ? ` (${loaded.toLocaleString("en-US")} read)` : ""}`;
    if (wanted !== null && model.positionOf(wanted) !== undefined) {
      const id = wanted;
      wanted = null;
      select(id, { scroll: true });
    }
  }

  const loader = new TreeLoader({
    base, runId, model, started: section.dataset.treeVersion,
    onRun: (r) => { run = r; view.stamp++; },
    onPage: ({ loaded, total, done }) => {
      grew(loaded, total);
      // The run's panel is read once the first rows are drawn: the two reads would otherwise share the server.
      if (!shown) { shown = true; if (selected === null && wanted === null) panel.show(""); }
      if (done && wanted !== null) {
        panel.root.replaceChildren(Object.assign(document.createElement("p"), { className: "subtle small", textContent: `This run has no span “${wanted}”.` }));
        wanted = null;
      }
    },
  });

  section.querySelector(".trace-tools").hidden = false;
  $("trace-keys").hidden = false;
  let shown = false;
  loader.load().catch((err) => {
    $("trace-count").textContent = `The trace could not be read: ${err.message}`;
  });
  // A node of the agent graph (graph-view.js) chosen: its spans are the matches, the first is opened.
  document.addEventListener("runwatch:select-spans", (e) => {
    const positions = (e.detail?.span_ids ?? []).map((id) => model.positionOf(id)).filter((p) => p !== undefined);
    view.matches = new Set(positions);
    if (positions.length) goTo(model.inTreeOrder(positions)[0]);
    else view.invalidate();
  });
  window.addEventListener("hashchange", () => {
    const id = hashSpan();
    if (id !== null && id !== selected) {
      if (model.positionOf(id) !== undefined) select(id, { scroll: true });
      else wanted = id;
    }
  });
  // Running spans' bars grow with the clock.
  setInterval(() => { if (isLive(run)) view.invalidate(); }, 1000);

  return {
    /** The run as a pushed message or the header says it is now. */
    setRun(r) { run = r; view.invalidate(); },
    /** Reads what changed since the tree's cursor (reading it whole on `reset`) and shows it. */
    async update({ whole = false } = {}) {
      const before = model.size;
      const changed = whole ? (await loader.load(), null) : await loader.changes();
      if (changed) for (let i = before; i < model.size; i++) view.fresh.set(model.at(i).span_id, Date.now());
      grew(model.size, model.size);
      if (selected && (changed === null || changed.includes(selected))) panel.reload();
    },
    /** The run's own events changed (its header says so): its panel, if shown, reads them again. */
    runChanged() { if (!selected) panel.reload(); },
  };
}

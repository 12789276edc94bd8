// /dashboard/:run: when an event of this run is pushed, fetch what changed on the page since what it shows (the
// cursor in .live-state; web/runs/run-delta.ts) — the header, new and changed timeline items and spans — or the
// whole fragment when the server sends that, and apply it, keeping the reader's open/closed details and
// highlighting new items. Throttled; until the header shows the pushed state.
import { onReconnect, onRunEvents, refetchUntil, tick } from "./live.js";

const root = document.getElementById("run-live");
const runId = root.dataset.run;
const MIN_INTERVAL_MS = 250;

let busy = false;
let again = false;
let last = 0;

async function refresh({ whole = false } = {}) {
  if (busy) { again = true; return; }
  const wait = last + MIN_INTERVAL_MS - Date.now();
  if (wait > 0) { busy = true; await new Promise((r) => setTimeout(r, wait)); busy = false; }
  busy = true;
  last = Date.now();
  try {
    const url = new URL(location.href);
    url.searchParams.set("fragment", "live");
    const state = root.querySelector(".live-state")?.dataset;
    const status = root.querySelector(".run-head")?.dataset.status;
    if (!whole && state?.cursor && status) {
      url.searchParams.set("since", state.cursor);
      url.searchParams.set("n", state.n);
      url.searchParams.set("st", status);
    }
    const res = await fetch(url, { credentials: "same-origin" });
    if (!res.ok) return;
    const html = await res.text();
    if (res.headers.get("X-Runwatch-Fragment") === "delta") applyDelta(html);
    else swap(html);
  } catch (err) {
    console.warn("run page refresh failed", err);
  } finally {
    busy = false;
    if (again) { again = false; refresh(); }
  }
}

const detailsKey = (d) => `${d.closest("li").dataset.eventId}:${d.querySelector("summary")?.textContent}`;

function swap(html) {
  const seen = new Set([...root.querySelectorAll("[data-event-id]")].map((el) => el.dataset.eventId));
  const openState = new Map();
  for (const d of root.querySelectorAll("li[data-event-id] details")) openState.set(detailsKey(d), d.open);
  root.innerHTML = html;
  for (const d of root.querySelectorAll("li[data-event-id] details")) {
    const key = detailsKey(d);
    if (openState.has(key)) d.open = openState.get(key);
  }
  for (const li of root.querySelectorAll("li[data-event-id]")) if (!seen.has(li.dataset.eventId)) li.classList.add("tl-new");
  tick(root);
}

const byData = (scope, attr, value) => scope.querySelector(`[${attr}="${CSS.escape(value)}"]`);
const fromTemplate = (t) => t.content.firstElementChild;

/** An item's own <details> (not those of the spans listed under it). */
const ownDetails = (li) => [...li.querySelectorAll("details")].filter((d) => d.closest("li") === li);
/** Keeps the reader's open/closed details of an item on its re-rendered version (same details, same order). */
function keepOpen(from, to) {
  const was = ownDetails(from);
  const is = ownDetails(to);
  if (was.length === is.length) was.forEach((d, i) => { is[i].open = d.open; });
}

function replaceWith(el, t) {
  if (el && t) el.replaceWith(fromTemplate(t));
}

function applyTimelineItem(t) {
  const list = root.querySelector("#timeline");
  const li = fromTemplate(t);
  if (!list || !li) return;
  const old = byData(list, "data-event-id", t.dataset.id);
  if (old) {
    keepOpen(old, li);
    old.replaceWith(li);
    return;
  }
  list.querySelector(".tl-empty")?.remove();
  li.classList.add("tl-new");
  list.append(li);
}

function childList(li) {
  return li.querySelector(":scope > details > ul.sp-children");
}

function applySpan(t) {
  const tree = root.querySelector("#span-tree");
  const li = fromTemplate(t);
  if (!tree || !li) return;
  if (t.dataset.mode === "replace") {
    const old = byData(tree, "data-span-id", t.dataset.id);
    if (!old) return;
    const keep = childList(old);
    const into = childList(li);
    if (keep && into) into.replaceWith(keep);
    keepOpen(old, li);
    old.replaceWith(li);
    return;
  }
  // A span's id is never empty (core/events/spans.ts), so no parent means a root.
  const parentLi = t.dataset.parent ? byData(tree, "data-span-id", t.dataset.parent) : null;
  const list = parentLi ? childList(parentLi) : tree;
  if (!list) return;
  const before = t.dataset.before ? byData(list, "data-span-id", t.dataset.before) : null;
  li.classList.add("tl-new");
  list.insertBefore(li, before && before.parentElement === list ? before : null);
}

function applyDelta(html) {
  const doc = document.createElement("template");
  doc.innerHTML = html;
  for (const t of [...doc.content.children].filter((el) => el.matches("template[data-part]"))) {
    switch (t.dataset.part) {
      case "state": replaceWith(root.querySelector(".live-state"), t); break;
      case "head": replaceWith(root.querySelector(".run-head"), t); break;
      case "timeline": replaceWith(root.querySelector(".timeline-card"), t); break;
      case "timeline-head": replaceWith(root.querySelector(".timeline-card > .card-head"), t); break;
      case "timeline-foot": replaceWith(root.querySelector(".timeline-foot"), t); break;
      case "tl": applyTimelineItem(t); break;
      case "trace": root.querySelector("#trace-slot").replaceChildren(t.content.cloneNode(true)); break;
      case "trace-head": replaceWith(root.querySelector(".trace-card > .card-head"), t); break;
      case "span": applySpan(t); break;
    }
  }
  const state = root.querySelector(".live-state")?.dataset;
  root.querySelector("#timeline")?.style.setProperty("--total", state?.tlTotal ?? "1");
  root.querySelector("#span-tree")?.style.setProperty("--total", state?.treeTotal ?? "1");
  tick(root);
}

// Until the header shows at least the pushed event count (a run's count only grows): the first fetch can still read
// the run as it was (refetchUntil, live.js).
let wanted = 0;
const shownEvents = () => Number(root.querySelector(".run-head")?.dataset.events ?? 0);
const settle = refetchUntil(refresh, () => shownEvents() >= wanted);

onRunEvents((run) => {
  if (run.sdk_run_id !== runId) return;
  wanted = Math.max(wanted, Number(run.event_count) || 0);
  settle();
});
// After a drop the page may have missed anything: fetch it whole.
onReconnect(() => refresh({ whole: true }));

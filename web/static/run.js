// /dashboard/:run: when an event of this run is pushed, re-fetch the header and timeline fragment
// (throttled) until it shows the pushed state, and swap it in, keeping the reader's open/closed details and
// highlighting new items.
import { onReconnect, onRunEvents, refetchUntil, tick } from "./live.js";

const root = document.getElementById("run-live");
const runId = root.dataset.run;
const MIN_INTERVAL_MS = 250;

let busy = false;
let again = false;
let last = 0;

async function refresh() {
  if (busy) { again = true; return; }
  const wait = last + MIN_INTERVAL_MS - Date.now();
  if (wait > 0) { busy = true; await new Promise((r) => setTimeout(r, wait)); busy = false; }
  busy = true;
  last = Date.now();
  try {
    const url = new URL(location.href);
    url.searchParams.set("fragment", "live");
    const res = await fetch(url, { credentials: "same-origin" });
    if (res.ok) swap(await res.text());
  } catch (err) {
    console.warn("timeline refresh failed", err);
  } finally {
    busy = false;
    if (again) { again = false; refresh(); }
  }
}

function swap(html) {
  const seen = new Set([...root.querySelectorAll("[data-event-id]")].map((el) => el.dataset.eventId));
  const openState = new Map();
  for (const d of root.querySelectorAll("li[data-event-id] details")) {
    openState.set(`${d.closest("li").dataset.eventId}:${d.querySelector("summary")?.textContent}`, d.open);
  }
  root.innerHTML = html;
  for (const d of root.querySelectorAll("li[data-event-id] details")) {
    const key = `${d.closest("li").dataset.eventId}:${d.querySelector("summary")?.textContent}`;
    if (openState.has(key)) d.open = openState.get(key);
  }
  for (const li of root.querySelectorAll("li[data-event-id]")) if (!seen.has(li.dataset.eventId)) li.classList.add("tl-new");
  tick(root);
}

// Until the header shows at least the pushed event count (a run's count only grows): the first fetch can still read
// the run as it was (refetchUntil, live.js).
let wanted = 0;
const shownEvents = () => Number(root.querySelector(".run-head")?.dataset.events ?? 0);
const settle = refetchUntil(refresh, () => shownEvents() >= wanted);

onRunEvents((run) => {
  if (run.external_id !== runId) return;
  wanted = Math.max(wanted, Number(run.event_count) || 0);
  settle();
});
onReconnect(refresh);

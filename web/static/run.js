// /dashboard/:run: the trace view (trace/trace-view.js), and the page kept live: when an event of this run is pushed,
// the header is fetched again (`?fragment=live`) and the tree reads what changed since its cursor — new spans go
// where they belong, the selected span is read again, a folded subtree stays folded. Throttled; and again until the
// header shows the pushed event count (the first fetch can still read the run as it was: refetchUntil, live.js).
import { onReconnect, onRunEvents, refetchUntil, tick } from "./live.js";
import { startTraceView } from "./trace/trace-view.js";

const root = document.getElementById("run-live");
const runId = root.dataset.run;
const trace = startTraceView(document.getElementById("trace"));
const MIN_INTERVAL_MS = 250;

let busy = false;
let again = false;
let last = 0;

const shownEvents = () => Number(root.querySelector(".run-head")?.dataset.events ?? 0);

async function refresh({ whole = false } = {}) {
  if (busy) { again = true; return; }
  const wait = last + MIN_INTERVAL_MS - Date.now();
  busy = true;
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  last = Date.now();
  try {
    const before = shownEvents();
    const url = new URL(location.href);
    url.hash = "";
    url.searchParams.set("fragment", "live");
    const [res] = await Promise.all([
      fetch(url, { credentials: "same-origin" }),
      trace.update({ whole }).catch((err) => console.warn("trace update failed", err)),
    ]);
    if (res.ok) {
      root.innerHTML = await res.text();
      tick(root);
    }
    if (shownEvents() !== before) trace.runChanged();
  } catch (err) {
    console.warn("run page refresh failed", err);
  } finally {
    busy = false;
    if (again) { again = false; refresh(); }
  }
}

let wanted = 0;
const settle = refetchUntil(refresh, () => shownEvents() >= wanted);

onRunEvents((run) => {
  if (run.sdk_run_id !== runId) return;
  trace.setRun(run);
  wanted = Math.max(wanted, Number(run.event_count) || 0);
  settle();
});
// After a drop the page may have missed anything: read it whole.
onReconnect(() => refresh({ whole: true }));

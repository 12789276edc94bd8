// /datasets/:name/compare: when a run of one of the compared experiments is pushed, re-fetch the comparison table
// (throttled) and swap it in, so an experiment that is running fills in as its items finish.
import { onReconnect, onRunEvents, tick } from "./live.js";

const root = document.getElementById("experiment-live");
const ids = new Set(root.dataset.experiments.split(","));
const MIN_INTERVAL_MS = 500;
let last = 0;
let pending = null;

async function refresh() {
  last = Date.now();
  try {
    const url = new URL(location.href);
    url.searchParams.set("fragment", "table");
    const res = await fetch(url, { credentials: "same-origin" });
    if (res.ok) {
      root.innerHTML = await res.text();
      tick(root);
    }
  } catch (err) {
    console.warn("comparison refresh failed", err);
  }
}

/** A refresh at most MIN_INTERVAL_MS after the last one began; calls while it waits share it. */
function throttled() {
  return (pending ??= new Promise((r) => setTimeout(r, Math.max(0, last + MIN_INTERVAL_MS - Date.now()))).then(() => {
    pending = null;
    return refresh();
  }));
}

// A run's message goes out as its new version is written; the fetch after the throttle sees it stored.
onRunEvents((run) => {
  if (run.experiment_id && ids.has(run.experiment_id)) throttled();
});
onReconnect(throttled);

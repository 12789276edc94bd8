// /datasets/:name/compare: when a run of one of the compared experiments is pushed, or scores were given to some
// (`experiment_scores`), re-fetch the comparison table (throttled) and swap it in, so an experiment that is running
// fills in as its items finish and are scored.
import { fragmentRefresher, onMessage, onReconnect, onRunEvents, refetchUntil } from "./live.js";

const root = document.getElementById("experiment-live");
const ids = new Set(root.dataset.experiments.split(","));
const refresh = fragmentRefresher(root, "table", 500);

// A run's message goes out as its new version is written, so the first fetch can still show the run as it was:
// fetch again until each pushed run shows the status it was pushed with (refetchUntil, live.js).
const wanted = new Map();
function settled() {
  for (const [run, status] of wanted) {
    const shown = [...root.querySelectorAll(".compare-result[data-run]")].find((el) => el.dataset.run === run);
    if (!shown || shown.dataset.runStatus !== status) return false;
  }
  return true;
}
const settle = refetchUntil(refresh, settled, { tries: 12, intervalMs: 500, stopped: () => wanted.clear() });
onRunEvents((run) => {
  if (!run.experiment_id || !ids.has(run.experiment_id)) return;
  wanted.set(run.sdk_run_id, run.status);
  settle();
});
// Sent once the scores are stored.
onMessage((msg) => {
  if (msg.type === "experiment_scores" && Array.isArray(msg.experiment_ids) && msg.experiment_ids.some((id) => ids.has(id))) refresh();
});
onReconnect(refresh);

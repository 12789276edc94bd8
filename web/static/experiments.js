// /datasets/:name/compare: when a run of one of the compared experiments is pushed, or scores were given to some
// (`experiment_scores`), re-fetch the comparison table (throttled) and swap it in, so an experiment that is running
// fills in as its items finish and are scored.
import { fragmentRefresher, onMessage, onReconnect, onRunEvents } from "./live.js";

const root = document.getElementById("experiment-live");
const ids = new Set(root.dataset.experiments.split(","));
const refresh = fragmentRefresher(root, "table", 500);

// A run's message goes out as its new version is written; the fetch after the throttle sees it stored.
onRunEvents((run) => {
  if (run.experiment_id && ids.has(run.experiment_id)) refresh();
});
// Sent once the scores are stored.
onMessage((msg) => {
  if (msg.type === "experiment_scores" && Array.isArray(msg.experiment_ids) && msg.experiment_ids.some((id) => ids.has(id))) refresh();
});
onReconnect(refresh);

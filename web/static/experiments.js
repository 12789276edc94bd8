// /datasets/:name/compare: when a run of one of the compared experiments is pushed, re-fetch the comparison table
// (throttled) and swap it in, so an experiment that is running fills in as its items finish.
import { fragmentRefresher, onReconnect, onRunEvents } from "./live.js";

const root = document.getElementById("experiment-live");
const ids = new Set(root.dataset.experiments.split(","));
const refresh = fragmentRefresher(root, "table", 500);

// A run's message goes out as its new version is written; the fetch after the throttle sees it stored.
onRunEvents((run) => {
  if (run.experiment_id && ids.has(run.experiment_id)) refresh();
});
onReconnect(refresh);

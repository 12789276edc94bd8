// /evaluators/:id: as the project's runs end (their evaluations are queued then, and a judge's own run ends when it
// has scored), re-fetch the latest evaluations (throttled) and swap them in, so scores arrive while you watch.
import { fragmentRefresher, onReconnect, onRunEvents } from "./live.js";

const root = document.getElementById("evaluator-live");
const refresh = fragmentRefresher(root, "jobs", 1000);

onRunEvents((run) => {
  if (run.status === "success" || run.status === "error") refresh();
});
onReconnect(refresh);

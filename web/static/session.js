// /sessions/:id: when an event of one of this session's runs is pushed (or a run joins it), re-fetch the turns
// fragment (throttled) until it shows the pushed state, and swap it in.
import { fragmentRefresher, onReconnect, onRunEvents, refetchUntil } from "./live.js";

const root = document.getElementById("session-live");
const sessionId = root.dataset.session;
const throttled = fragmentRefresher(root, "live", 250);

// Until each pushed run's turn shows at least its pushed event count (a run's count only grows): the first fetch can
// still miss a new turn or show one as it was (refetchUntil, live.js).
const wanted = new Map();
function settled() {
  for (const [run, events] of wanted) {
    const turn = [...root.querySelectorAll(".turn[data-run]")].find((el) => el.dataset.run === run);
    if (!turn || Number(turn.dataset.events) < events) return false;
  }
  return true;
}
const settle = refetchUntil(throttled, settled, { stopped: () => wanted.clear() });

onRunEvents((run) => {
  if (run.session_id !== sessionId) return;
  wanted.set(run.sdk_run_id, Math.max(wanted.get(run.sdk_run_id) ?? 0, Number(run.event_count) || 0));
  settle();
});
onReconnect(throttled);

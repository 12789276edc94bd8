// /sessions/:id: when an event of one of this session's runs is pushed (or a run joins it), re-fetch the turns
// fragment (throttled) until it shows the pushed state, and swap it in.
import { onReconnect, onRunEvents, tick } from "./live.js";

const root = document.getElementById("session-live");
const sessionId = root.dataset.session;
const MIN_INTERVAL_MS = 250;
let timer = null;
let last = 0;

// A pushed message goes out once a run's events are stored, beside the write of the run's new version that its turn
// is rendered from, so a fragment fetched at once can still miss a new turn or show one as it was. A run's event
// count only grows: until each pushed run's turn shows at least its pushed count, fetch again (at the throttle's
// pace, at most 8 times; a later message starts over).
const SETTLE_TRIES = 8;
const wanted = new Map();
let tries = 0;

function settled() {
  for (const [run, events] of wanted) {
    const turn = [...root.querySelectorAll(".turn[data-run]")].find((el) => el.dataset.run === run);
    if (!turn || Number(turn.dataset.events) < events) return false;
  }
  return true;
}

async function refresh() {
  last = Date.now();
  try {
    const url = new URL(location.href);
    url.searchParams.set("fragment", "live");
    const res = await fetch(url, { credentials: "same-origin" });
    if (res.ok) {
      root.innerHTML = await res.text();
      tick(root);
    }
  } catch (err) {
    console.warn("session refresh failed", err);
  }
  if (wanted.size === 0) return;
  if (settled() || --tries <= 0) wanted.clear();
  else schedule();
}

function schedule() {
  if (timer) return;
  timer = setTimeout(() => { timer = null; refresh(); }, Math.max(0, last + MIN_INTERVAL_MS - Date.now()));
}

onRunEvents((run) => {
  if (run.session_id !== sessionId) return;
  wanted.set(run.external_id, Math.max(wanted.get(run.external_id) ?? 0, Number(run.event_count) || 0));
  tries = SETTLE_TRIES;
  schedule();
});
onReconnect(schedule);

// /sessions/:id: when an event of one of this session's runs is pushed (or a run joins it), re-fetch the turns
// fragment (throttled) and swap it in.
import { onReconnect, onRunEvents, tick } from "./live.js";

const root = document.getElementById("session-live");
const sessionId = root.dataset.session;
const MIN_INTERVAL_MS = 250;
let timer = null;
let last = 0;

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
}

function schedule() {
  if (timer) return;
  timer = setTimeout(() => { timer = null; refresh(); }, Math.max(0, last + MIN_INTERVAL_MS - Date.now()));
}

onRunEvents((run) => {
  if (run.session_id === sessionId) schedule();
});
onReconnect(schedule);

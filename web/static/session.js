// /sessions/:id as a conversation: each turn's input and output rendered as messages (trace/transcript.js). When an
// event of one of this session's runs is pushed (or a run joins it), the turns fragment is re-fetched (throttled)
// until it shows the pushed state, and merged in: a turn that did not change keeps its DOM (what the reader unfolded
// stays unfolded), a changed or new one is rendered anew.
import { fragmentRefresher, onReconnect, onRunEvents, refetchUntil } from "./live.js";
import { renderTurnSide } from "./trace/transcript.js";
import { ensureStyles } from "./trace/messages.js";

const root = document.getElementById("session-live");
const sessionId = root.dataset.session;
ensureStyles();

/** Renders each side of `scope`'s turns that is still the server's JSON. */
function hydrate(scope) {
  for (const pre of scope.querySelectorAll("pre[data-payload]")) {
    let value;
    try {
      value = JSON.parse(pre.textContent);
    } catch {
      continue; // left as the text it is
    }
    const box = document.createElement("div");
    box.className = `turn-messages ${pre.className}`;
    pre.replaceWith(box);
    renderTurnSide(box, value, pre.dataset.payload);
  }
}

const sameTurn = (a, b) => a.dataset.events === b.dataset.events && a.dataset.status === b.dataset.status;

function merge(html) {
  const fresh = document.createElement("template");
  fresh.innerHTML = html; // the server's rendering (autoescaped), parsed inert
  const list = root.querySelector("ol.turns");
  const nextList = fresh.content.querySelector("ol.turns");
  if (!list || !nextList) {
    root.replaceChildren(fresh.content);
    hydrate(root);
    return;
  }
  const old = new Map([...list.querySelectorAll(":scope > li.turn")].map((li) => [li.dataset.run, li]));
  const items = [...nextList.querySelectorAll(":scope > li.turn")].map((li, i) => {
    const had = old.get(li.dataset.run);
    if (had && sameTurn(had, li)) {
      had.querySelector(".turn-head strong").textContent = `Turn ${i + 1}`;
      return had;
    }
    if (!had) li.classList.add("turn-new");
    hydrate(li);
    return li;
  });
  root.querySelector(".card-head")?.replaceWith(fresh.content.querySelector(".card-head"));
  list.replaceChildren(...items);
}

hydrate(root);
const throttled = fragmentRefresher(root, "live", 250, merge);

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

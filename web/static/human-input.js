// /dashboard/{run}: the human-input box (web/human-input/views/_human_input.njk). Progressive enhancement: the form posts
// without JavaScript too. With it, the answer is sent with fetch and shown in place, errors (already answered,
// empty answer) appear under the box, and the box is re-fetched when this run changes live (it appears when
// the run starts waiting, and goes away once the agent reports the answer), keeping a half-typed answer.
import { onReconnect, onRunEvents, refetchUntil } from "./live.js";

const box = document.getElementById("human-input");
const runId = box?.dataset.run;
const drafts = new Map(); // request event id → unsent text

function csrf() {
  return box.querySelector('input[name="_csrf"]')?.value ?? document.querySelector('input[name="_csrf"]')?.value ?? "";
}

function bind() {
  const form = box.querySelector("form.hitl-form");
  if (!form) return;
  const text = form.querySelector("textarea");
  const error = form.querySelector(".hitl-error");
  const request = box.dataset.request;
  if (drafts.has(request) && !text.value) text.value = drafts.get(request);
  text.addEventListener("input", () => drafts.set(request, text.value));
  text.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); form.requestSubmit(); }
  });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    error.hidden = true;
    if (!text.value.trim()) { showError(error, "Type an answer first."); text.focus(); return; }
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      const res = await fetch(form.action, {
        method: "POST",
        credentials: "same-origin",
        headers: { Accept: "application/json", "Content-Type": "application/x-www-form-urlencoded", "X-CSRF-Token": csrf() },
        body: new URLSearchParams(new FormData(form)),
      });
      const body = await res.json().catch(() => ({}));
      if (res.ok) { drafts.delete(request); await refresh(); return; }
      showError(error, body?.error?.message ?? `The answer was not saved (HTTP ${res.status}).`);
      if (res.status === 409) setTimeout(refresh, 1500);
    } catch {
      showError(error, "Could not reach Runwatch. Check your connection and send again.");
    } finally {
      button.disabled = false;
    }
  });
}

function showError(el, message) {
  el.textContent = message;
  el.hidden = false;
}

// Re-fetched until the box is open exactly when the pushed run is waiting: the first fetch can still read the run
// as it was (refetchUntil, live.js).
let wantOpen = false;
const settle = refetchUntil(() => refresh(), () => box.classList.contains("hitl-open") === wantOpen);

let inflight = null;
async function refresh() {
  if (inflight) return inflight;
  inflight = (async () => {
    try {
      const res = await fetch(`${document.body.dataset.base ?? ""}/dashboard/${encodeURIComponent(runId)}/input`, { credentials: "same-origin", headers: { Accept: "text/html" } });
      if (!res.ok) return;
      const doc = new DOMParser().parseFromString(await res.text(), "text/html");
      const next = doc.getElementById("human-input");
      if (!next) return;
      const typing = document.activeElement === box.querySelector("textarea");
      if (typing && next.dataset.request === box.dataset.request && next.querySelector("form")) return; // same open question: keep the box as is
      box.className = next.className;
      box.dataset.request = next.dataset.request;
      box.innerHTML = next.innerHTML;
      bind();
    } finally {
      inflight = null;
    }
  })();
  return inflight;
}

if (box && runId) {
  bind();
  onRunEvents((run, events) => {
    if (run.sdk_run_id === runId && events.some((e) => /^human_input_|^run_end$|^error$/.test(e?.event_type ?? ""))) {
      wantOpen = run.status === "waiting_for_input";
      settle();
    }
  });
  onReconnect(refresh);
}

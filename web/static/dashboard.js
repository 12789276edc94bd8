// /dashboard and /errors: patch, insert or remove run rows from pushed messages; refresh the summary
// (counts and panels) from the server, throttled, when statuses change.
import { onReconnect, onRunEvents, tick } from "./live.js";
import { ago, count, duration, runDurationMs, statusLabel, timestamp, usd } from "./format.js";

const table = document.getElementById("runs");
const tbody = table.querySelector("tbody");
const template = document.getElementById("run-row-template");
const summary = document.querySelector("[data-live-summary]");
const f = table.dataset;
const limit = Number(f.limit) || 50;
// New runs are added live only where the browser can tell that they match: a first page in the default order, of a
// filter that names statuses and agents at most (data-live-insert); other rows are patched in place.
const liveInsert = f.liveInsert === "true";
const statuses = f.filterStatus ? f.filterStatus.split(",") : [];
const agents = f.filterAgent ? f.filterAgent.split(",") : [];

// Without an agent filter the list is the production runs: the LLM judge's own runs (data-evaluation-agent) only
// show when their agent is asked for by name, as on the server (stores/runs/runs-filter-sql.ts).
const matches = (run) =>
  (statuses.length === 0 || statuses.includes(run.status)) &&
  (agents.length ? agents.includes(run.agent_name) : run.agent_name !== f.evaluationAgent) &&
  !run.experiment_id;

function fill(tr, run) {
  tr.dataset.run = run.sdk_run_id;
  tr.dataset.status = run.status;
  tr.dataset.agent = run.agent_name ?? "";
  tr.dataset.configVersion = run.config_version ?? "";
  const cell = (name) => tr.querySelector(`[data-f="${name}"]`);
  const set = (name, text, title) => {
    const el = cell(name);
    if (!el) return;
    (el.querySelector(".clamp") ?? el).textContent = text;
    if (title !== undefined) el.title = title;
  };
  const badge = cell("status");
  badge.className = `badge badge-${run.status}`;
  badge.textContent = statusLabel(run.status);
  const pick = tr.querySelector("input[name=sdk_run_id]");
  if (pick) pick.value = run.sdk_run_id;
  const link = cell("link");
  link.href = `${document.body.dataset.base ?? ""}/dashboard/${encodeURIComponent(run.sdk_run_id)}`;
  link.textContent = run.sdk_run_id;
  set("agent", run.agent_name || "—");
  const started = cell("started");
  started.dataset.ts = run.started_at ?? "";
  set("started", ago(run.started_at), `${timestamp(run.started_at)} UTC`);
  const dur = cell("duration");
  dur.dataset.started = run.started_at ?? "";
  dur.dataset.ended = run.ended_at ?? "";
  set("duration", duration(runDurationMs(run)));
  set("tokens", count(run.total_tokens), `${run.prompt_tokens ?? 0} prompt + ${run.completion_tokens ?? 0} completion`);
  set("cost", usd(run.cost_usd));
  set("model", run.model || "—");
  set("events", count(run.event_count));
  set("error", run.last_error || "—", run.last_error || "");
  if (run.input_preview !== undefined) set("input", run.input_preview || "—", run.input_preview ?? "");
  if (run.output_preview !== undefined) set("output", run.output_preview || "—", run.output_preview ?? "");
  if (run.environment !== undefined) set("environment", run.environment || "—");
  if (run.release !== undefined) set("release", run.release || "—");
  if (run.end_user !== undefined) set("user", run.end_user || "—");
  set("version", run.config_version ?? "—");
  const tags = cell("tags");
  if (tags && Array.isArray(run.tags)) chips(tags, run.tags, 4, "chip", []);
  // null: a run with LLM calls whose models its record does not name (core/events/run-json.ts).
  const models = cell("models");
  if (models && run.models !== undefined) chips(models, run.models ?? [], 3, "chip mono", ["—"]);
}

/** The first `shown` of `values` as chips in `el`, then "+n" for the rest; `none` when there are none. */
function chips(el, values, shown, className, none) {
  const chip = (text, title, cls = className) => Object.assign(document.createElement("span"), { className: cls, textContent: text, ...(title ? { title } : {}) });
  if (values.length === 0) return el.replaceChildren(...none);
  el.replaceChildren(...values.slice(0, shown).map((t) => chip(t)), ...(values.length > shown ? [chip(`+${values.length - shown}`, values.join(", "), "chip chip-more")] : []));
}

function flash(tr) {
  tr.classList.remove("row-new");
  void tr.offsetWidth; // restart the animation
  tr.classList.add("row-new");
}

const countEl = document.getElementById("runs-count");
function updateCount() {
  if (!countEl) return;
  const n = tbody.querySelectorAll("tr[data-run]").length;
  countEl.textContent = `${n} run${n === 1 ? "" : "s"} on this page`;
}

let summaryTimer = null;
let summaryBusy = false;
let summaryAgain = false;
/** At most one summary fetch in flight and one per second; the last change always gets reflected. */
function refreshSummary() {
  if (!summary) return;
  if (summaryBusy || summaryTimer) { summaryAgain = true; return; }
  summaryBusy = true;
  fetch(`${document.body.dataset.base ?? ""}/dashboard?fragment=summary`, { credentials: "same-origin" })
    .then((r) => (r.ok ? r.text() : Promise.reject(new Error(`HTTP ${r.status}`))))
    .then((html) => { summary.innerHTML = html; tick(summary); })
    .catch((err) => console.warn("summary refresh failed", err))
    .finally(() => {
      summaryBusy = false;
      summaryTimer = setTimeout(() => {
        summaryTimer = null;
        if (summaryAgain) { summaryAgain = false; refreshSummary(); }
      }, 1000);
    });
}

onRunEvents((run) => {
  const existing = tbody.querySelector(`tr[data-run="${CSS.escape(run.sdk_run_id)}"]`);
  const statusChanged = !existing || existing.dataset.status !== run.status;
  if (existing) {
    if (!liveInsert || matches(run)) { fill(existing, run); if (statusChanged) flash(existing); }
    else { existing.remove(); updateCount(); }
  } else if (liveInsert && matches(run)) {
    const tr = template.content.firstElementChild.cloneNode(true);
    fill(tr, run);
    tbody.querySelector(".empty-row")?.remove();
    tbody.prepend(tr);
    flash(tr);
    while (tbody.rows.length > limit) tbody.lastElementChild.remove();
    updateCount();
  }
  if (statusChanged) refreshSummary();
});

// After a reconnect, messages may have been missed: reload rows and summary from the server.
onReconnect(async () => {
  try {
    const html = await (await fetch(location.href, { credentials: "same-origin" })).text();
    const doc = new DOMParser().parseFromString(html, "text/html");
    const fresh = doc.querySelector("#runs tbody");
    if (fresh) { tbody.replaceChildren(...fresh.children); updateCount(); }
  } catch (err) { console.warn(err); }
  refreshSummary();
});

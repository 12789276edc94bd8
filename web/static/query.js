// The /query page (docs/DASHBOARD.md, Query): the SQL editor (Ctrl/Cmd+Enter runs, Tab indents, Esc then Tab
// leaves it), parameters and max rows, sent to POST /query/run; the answer as a table (column types in the header,
// numbers to the right, long cells folded), its row count and time, a banner when a bound cut it or it was refused,
// a chart of its first numeric column over its first date/time column (uPlot, served by the app), downloads of the
// same query as CSV or JSON Lines (POST /query/export), and a link that carries the SQL. Saving is the form's own
// post; this script only writes the parameters into it first.
import uPlot from "/static/vendor/uplot/uPlot.esm.js";
import { rowCount, cellHtml, chartSeries, isNumericType, refusalText } from "./query-results.js";

const form = document.getElementById("query-form");
const editor = document.getElementById("sql");
const maxRows = document.getElementById("max-rows");
const paramRows = document.getElementById("param-rows");
const paramsJson = document.getElementById("params-json");
const banner = document.getElementById("query-banner");
const results = document.getElementById("query-results");
const table = document.getElementById("result-table");
const meta = document.getElementById("query-meta");
const chartCard = document.getElementById("query-chart");
const chartPlot = document.getElementById("query-chart-plot");
const runButton = document.getElementById("run-query");
const csrf = form?.querySelector('input[name="_csrf"]')?.value ?? "";
let chart = null;
let running = null;

// ---------- The editor ----------

/** Types `text` over the selection, keeping the browser's undo history where it can. */
function insertText(text) {
  editor.focus();
  if (!document.execCommand?.("insertText", false, text)) editor.setRangeText(text, editor.selectionStart, editor.selectionEnd, "end");
}

/** Tab: two spaces at the caret, or the selected lines indented; Shift+Tab takes them back out. */
function indent(out) {
  const { selectionStart: start, selectionEnd: end, value } = editor;
  if (!out && start === end) return insertText("  ");
  const from = value.lastIndexOf("\n", start - 1) + 1;
  const to = end > start && value[end - 1] === "\n" ? end - 1 : end;
  const lines = value.slice(from, to).split("\n").map((l) => (out ? l.replace(/^( {1,2}|\t)/, "") : `  ${l}`)).join("\n");
  editor.setSelectionRange(from, to);
  insertText(lines);
  editor.setSelectionRange(from, from + lines.length);
}

// After Esc, Tab leaves the editor as it does any other field (the keyboard is never trapped).
let tabLeaves = false;
editor?.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    run();
  } else if (e.key === "Escape") {
    tabLeaves = true;
  } else if (e.key === "Tab" && !tabLeaves && !e.altKey && !e.ctrlKey && !e.metaKey) {
    e.preventDefault();
    indent(e.shiftKey);
  } else if (e.key !== "Shift") {
    tabLeaves = false;
  }
});
editor?.addEventListener("blur", () => { tabLeaves = false; });

// A table's or column's name from the schema goes in at the caret (the <summary> around it does not toggle).
document.getElementById("query-schema")?.addEventListener("click", (e) => {
  const name = e.target.closest?.("[data-insert]")?.dataset.insert;
  if (!name) return;
  e.preventDefault();
  insertText(name);
});

// ---------- Parameters ----------

function paramRow(name = "", value = "") {
  const row = document.createElement("div");
  row.className = "param-row";
  const input = (cls, label, v, placeholder, max) => Object.assign(document.createElement("input"), { className: cls, value: v, placeholder, maxLength: max, spellcheck: false, ariaLabel: label });
  const remove = Object.assign(document.createElement("button"), { type: "button", className: "btn btn-ghost btn-sm param-remove", textContent: "×", ariaLabel: "Remove parameter" });
  const eq = Object.assign(document.createElement("span"), { textContent: "=", ariaHidden: "true" });
  row.append(input("param-name", "Parameter name", name, "name", 64), eq, input("param-value", "Parameter value", value, "value", 2000), remove);
  return row;
}

/** The parameters' rows as {name: value}; a row without a name is left out. */
function paramsObject() {
  const out = {};
  for (const row of paramRows?.querySelectorAll(".param-row") ?? []) {
    const name = row.querySelector(".param-name").value.trim();
    if (name) out[name] = row.querySelector(".param-value").value;
  }
  return out;
}

document.getElementById("param-add")?.addEventListener("click", () => {
  const row = paramRow();
  paramRows.append(row);
  row.querySelector("input").focus();
});
paramRows?.addEventListener("click", (e) => {
  if (e.target.closest(".param-remove")) e.target.closest(".param-row").remove();
});
// Enter in a parameter or in max rows runs the query (it would otherwise submit the save form).
form?.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && e.target.matches?.(".param-name, .param-value, #max-rows")) {
    e.preventDefault();
    run();
  }
});
form?.addEventListener("submit", () => { paramsJson.value = JSON.stringify(paramsObject()); });

// ---------- Running ----------

/** What POST /query/run and /query/export take: the editor's SQL, its parameters and max rows as typed. */
function request() {
  const body = { sql: editor.value };
  const params = paramsObject();
  if (Object.keys(params).length) body.params = params;
  if (maxRows.value.trim() !== "") body.max_rows = Number(maxRows.value);
  return body;
}

function post(url, body, signal) {
  return fetch(url, {
    method: "POST", credentials: "same-origin", signal,
    headers: { "content-type": "application/json", accept: "application/json", "x-csrf-token": csrf },
    body: JSON.stringify(body),
  });
}

function say(kind, text) {
  banner.hidden = !text;
  banner.textContent = text ?? "";
  banner.className = `query-banner is-${kind}`;
  banner.dataset.kind = kind;
  banner.setAttribute("role", kind === "refused" ? "alert" : "status");
}

/** The page's URL for the editor as it is: the SQL, its parameters and max rows (and the saved query it came from). */
function linkOf(withSaved) {
  const q = new URLSearchParams();
  if (withSaved && form.dataset.saved) q.set("saved", form.dataset.saved);
  q.set("sql", editor.value);
  for (const [k, v] of Object.entries(paramsObject())) q.set(`p.${k}`, v);
  if (maxRows.value && maxRows.value !== form.dataset.defaultRows) q.set("max_rows", maxRows.value);
  return `${form.dataset.share}?${q}`;
}

async function run() {
  const body = request();
  if (!body.sql.trim()) {
    say("refused", "Write a query first, e.g. the one greyed out in the editor.");
    return;
  }
  running?.abort();
  const mine = new AbortController();
  running = mine;
  runButton.disabled = true;
  results.dataset.state = "running";
  meta.textContent = "Running…";
  try {
    const res = await post(form.dataset.run, body, mine.signal);
    const answer = await res.json().catch(() => null);
    if (running !== mine) return;
    if (!res.ok || !answer?.columns) {
      clear();
      say("refused", refusalText(res.status, answer));
      results.dataset.state = "refused";
      meta.textContent = "No rows: the query was refused.";
      return;
    }
    show(answer);
    history.replaceState(null, "", linkOf(true));
  } catch (err) {
    if (err.name === "AbortError") return;
    say("refused", `The query could not be sent (${err.message}); check the connection and run it again.`);
    results.dataset.state = "failed";
    meta.textContent = "";
  } finally {
    if (running === mine) {
      running = null;
      runButton.disabled = false;
    }
  }
}
runButton?.addEventListener("click", run);

function clear() {
  table.replaceChildren();
  chart?.destroy();
  chart = null;
  chartCard.hidden = true;
}

function show(answer) {
  const { columns, rows } = answer;
  const numeric = columns.map((c) => isNumericType(c.type));
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
  const head = columns.map((c, i) => `<th scope="col"${numeric[i] ? ' class="num"' : ""}><span class="col-name">${esc(c.name)}</span><span class="col-type">${esc(c.type)}</span></th>`).join("");
  const body = rows.map((r) => `<tr>${r.map((v, i) => `<td${numeric[i] ? ' class="num"' : ""}>${cellHtml(v, esc)}</td>`).join("")}</tr>`).join("");
  table.innerHTML = `<thead><tr>${head}</tr></thead><tbody>${body || `<tr class="empty-row"><td colspan="${Math.max(1, columns.length)}">No rows.</td></tr>`}</tbody>`;
  const n = rows.length;
  meta.textContent = `${rowCount(n)}${answer.truncated ? " (cut)" : ""} · ${Math.round(answer.elapsed_ms ?? 0).toLocaleString("en-US")} ms`;
  Object.assign(results.dataset, { state: "ready", rows: String(n), truncated: String(Boolean(answer.truncated)) });
  if (answer.truncated) {
    say("cut", answer.limit === "bytes"
      ? `First ${rowCount(n)}: the answer passed the size limit. Select fewer or shorter columns, or aggregate.`
      : `First ${rowCount(n)} — raise max rows or aggregate.`);
  } else {
    say("info", "");
  }
  drawChart(columns, rows);
}

// ---------- The chart ----------

function drawChart(columns, rows) {
  chart?.destroy();
  chart = null;
  const series = chartSeries(columns, rows);
  chartCard.hidden = !series;
  if (!series) {
    delete chartCard.dataset.points;
    return;
  }
  const n = series.xs.length;
  document.getElementById("query-chart-caption").textContent = `${series.y} over ${series.x}, ${n.toLocaleString("en-US")} point${n === 1 ? "" : "s"}`;
  Object.assign(chartCard.dataset, { state: "ready", points: String(series.xs.length), x: series.x, y: series.y });
  chartPlot.replaceChildren();
  const axis = { stroke: "#667085", grid: { stroke: "#eef0f3" }, ticks: { stroke: "#e4e7ec" }, font: "11px sans-serif" };
  chart = new uPlot({
    width: Math.max(240, chartPlot.clientWidth - 24),
    height: 220,
    cursor: { drag: { x: true, y: false } },
    scales: { x: { time: true } },
    series: [{ value: (u, ts) => (ts === null ? "—" : new Date(ts * 1000).toISOString().replace("T", " ").slice(0, 19)) },
      { label: series.y, stroke: "#4f46e5", width: 1.5, fill: "rgba(79,70,229,.08)", points: { show: series.xs.length <= 60 }, spanGaps: false }],
    axes: [axis, { ...axis, size: (u, values) => (values?.length ? Math.max(...values.map((v) => String(v).length)) * 6.5 + 16 : 40) }],
  }, [series.xs, series.ys], chartPlot);
}

if (chartPlot) {
  let width = chartPlot.clientWidth;
  new ResizeObserver(() => {
    if (!chart || Math.abs(chartPlot.clientWidth - width) < 8) return;
    width = chartPlot.clientWidth;
    chart.setSize({ width: Math.max(240, width - 24), height: 220 });
  }).observe(chartPlot);
}

// ---------- Downloads and the link ----------

async function download(format) {
  const body = request();
  if (!body.sql.trim()) return say("refused", "Write a query first: the file holds its rows.");
  say("info", `Preparing the ${format === "csv" ? "CSV" : "JSON Lines"} file…`);
  try {
    const res = await post(`${form.dataset.export}?format=${format}`, body);
    if (!res.ok) return say("refused", refusalText(res.status, await res.json().catch(() => null)));
    const blob = await res.blob();
    const name = /filename="([^"]+)"/.exec(res.headers.get("content-disposition") ?? "")?.[1] ?? `query.${format}`;
    const a = Object.assign(document.createElement("a"), { href: URL.createObjectURL(blob), download: name, hidden: true });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
    const n = Number(res.headers.get("x-runwatch-query-rows") ?? 0);
    say(res.headers.get("x-runwatch-query-truncated") === "true" ? "cut" : "info",
      res.headers.get("x-runwatch-query-truncated") === "true"
        ? `The file holds the first ${rowCount(n)} — raise max rows or aggregate for the rest.`
        : `Downloaded ${name}: ${rowCount(n)}.`);
  } catch (err) {
    say("refused", `The file could not be downloaded (${err.message}).`);
  }
}
document.getElementById("download-csv")?.addEventListener("click", () => download("csv"));
document.getElementById("download-jsonl")?.addEventListener("click", () => download("jsonl"));

document.getElementById("share-query")?.addEventListener("click", async () => {
  const field = document.getElementById("share-url");
  field.value = new URL(linkOf(false), location.origin).href;
  field.hidden = false;
  field.select();
  try {
    await navigator.clipboard.writeText(field.value);
    say("info", "Link copied: it opens this SQL, its parameters and max rows for any member of the project.");
  } catch {
    say("info", "Copy the link above: it opens this SQL, its parameters and max rows for any member of the project.");
  }
});

if (form?.dataset.autorun === "true") run();

// The runs charts (docs/DASHBOARD.md, Charts): the JSON of /runs/chart for the page's filter (the element's
// data-src) drawn with uPlot, served by the app (/static/vendor/uplot/). Five small charts share the time axis: runs
// and errors, latency p50/p95/p99, tokens, cost and score means, each with the range's config activations as dashed
// markers. The values are also written to a table beside them (#chart-data), for screen readers and for reading back.
// Live: pushed run updates refresh the charts, at most once every REFRESH_MS.
import uPlot from "/static/vendor/uplot/uPlot.esm.js";
import { onReconnect, onRunEvents } from "./live.js";
import { count, duration, usd } from "./format.js";

const REFRESH_MS = 5000;
const root = document.getElementById("runs-chart");
const COLORS = { runs: "#4f46e5", errors: "#dc2626", rate: "#f59e0b", p50: "#16a34a", p95: "#d97706", p99: "#dc2626", tokens: "#0891b2", cost: "#7c3aed" };
const SCORE_COLORS = ["#2563eb", "#db2777", "#059669", "#ea580c", "#64748b"];
const charts = [];

const bars = uPlot.paths.bars({ size: [0.7, 40], gap: 1 });
const plainNumber = (v) => (v === null || v === undefined ? "—" : count(v));
const timeLabel = (u, ts) => (ts === null ? "—" : new Date(ts * 1000).toISOString().replace("T", " ").slice(5, 16));

/** Dashed vertical lines where a config version became active, labelled agent vN. */
function markers(activations) {
  return (u) => {
    const { ctx, bbox } = u;
    ctx.save();
    ctx.strokeStyle = "#7c3aed";
    ctx.fillStyle = "#5b21b6";
    ctx.lineWidth = Math.max(1, uPlot.pxRatio);
    ctx.setLineDash([4 * uPlot.pxRatio, 3 * uPlot.pxRatio]);
    ctx.font = `${10 * uPlot.pxRatio}px sans-serif`;
    for (const a of activations) {
      const x = Math.round(u.valToPos(Date.parse(a.at) / 1000, "x", true));
      if (x < bbox.left || x > bbox.left + bbox.width) continue;
      ctx.beginPath();
      ctx.moveTo(x, bbox.top);
      ctx.lineTo(x, bbox.top + bbox.height);
      ctx.stroke();
      ctx.fillText(`${a.agent} v${a.version}`, x + 3 * uPlot.pxRatio, bbox.top + 10 * uPlot.pxRatio);
    }
    ctx.restore();
  };
}

/** A y axis as wide as its longest label ("1 m 40 s", "$0.0042"). */
const axisSize = (u, values) => (values?.length ? Math.max(...values.map((v) => String(v).length)) * 6.5 + 16 : 40);

/** One chart's options: `series` beside the time axis, `fmt` for the y axis and the legend. */
function options(el, series, fmt, activations, extraScales = {}, extraAxes = []) {
  return {
    width: Math.max(240, el.clientWidth),
    height: 150,
    legend: { live: true },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.1 : 1] }, ...extraScales },
    series: [{ value: timeLabel }, ...series.map((s) => ({ ...s, value: (u, v) => (v === null || v === undefined ? "—" : (s.fmt ?? fmt)(v)) }))],
    axes: [
      { stroke: "#667085", grid: { stroke: "#eef0f3" }, ticks: { stroke: "#e4e7ec" }, font: "11px sans-serif" },
      { stroke: "#667085", grid: { stroke: "#eef0f3" }, ticks: { stroke: "#e4e7ec" }, font: "11px sans-serif", size: axisSize, values: (u, vals) => vals.map((v) => fmt(v)) },
      ...extraAxes,
    ],
    hooks: { draw: [markers(activations)] },
  };
}

function draw(el, opts, data) {
  const plot = el.querySelector(".chart-plot");
  plot.replaceChildren();
  charts.push(new uPlot(opts, data, plot));
}

/** The values as a table (one row a bucket), the charts' text alternative and what tests read back. */
function writeTable(chart) {
  const table = document.getElementById("chart-data");
  const names = chart.scores;
  const head = ["at", "runs", "errors", "error_rate", "p50_ms", "p95_ms", "p99_ms", "tokens", "cost_usd", ...names.map((n) => `score:${n}`)];
  const tr = (cells, tag) => `<tr>${cells.map((c) => `<${tag}>${String(c).replace(/[&<>]/g, (x) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[x])}</${tag}>`).join("")}</tr>`;
  const rows = chart.buckets.map((b) => tr([b.at, b.runs, b.errors, b.error_rate ?? "", b.p50_ms ?? "", b.p95_ms ?? "", b.p99_ms ?? "", b.tokens, b.cost_usd, ...names.map((n) => b.scores[n] ?? "")], "td"));
  table.innerHTML = `<caption>Runs per bucket</caption><thead>${tr(head, "th")}</thead><tbody>${rows.join("")}</tbody>`;
}

function render(chart) {
  for (const c of charts.splice(0)) c.destroy();
  const t = chart.buckets.map((b) => Date.parse(b.at) / 1000);
  const col = (k) => chart.buckets.map((b) => b[k]);
  // A bar of 0 is drawn as nothing (not a flat stroke along the axis).
  const bar = (k) => chart.buckets.map((b) => (b[k] ? b[k] : null));
  const acts = chart.activations;
  const fig = (metric) => root.querySelector(`[data-metric="${metric}"]`);
  draw(fig("runs"), options(fig("runs"), [
    { label: "Runs", stroke: COLORS.runs, fill: "rgba(79,70,229,.25)", paths: bars, points: { show: false } },
    { label: "Errors", stroke: COLORS.errors, fill: "rgba(220,38,38,.45)", paths: bars, points: { show: false } },
    { label: "Error rate", stroke: COLORS.rate, scale: "pct", width: 1.5, fmt: (v) => `${(v * 100).toFixed(1)}%` },
  ], plainNumber, acts, { pct: { range: [0, 1] } }, [{ scale: "pct", side: 1, size: 46, grid: { show: false }, stroke: "#667085", font: "11px sans-serif", values: (u, vals) => vals.map((v) => `${Math.round(v * 100)}%`) }]),
  [t, bar("runs"), bar("errors"), col("error_rate")]);
  draw(fig("latency"), options(fig("latency"), [
    { label: "p50", stroke: COLORS.p50, width: 1.5, spanGaps: true },
    { label: "p95", stroke: COLORS.p95, width: 1.5, spanGaps: true },
    { label: "p99", stroke: COLORS.p99, width: 1.5, spanGaps: true },
  ], duration, acts), [t, col("p50_ms"), col("p95_ms"), col("p99_ms")]);
  draw(fig("tokens"), options(fig("tokens"), [{ label: "Tokens", stroke: COLORS.tokens, fill: "rgba(8,145,178,.3)", paths: bars, points: { show: false } }], plainNumber, acts), [t, bar("tokens")]);
  draw(fig("cost"), options(fig("cost"), [{ label: "Cost", stroke: COLORS.cost, fill: "rgba(124,58,237,.3)", paths: bars, points: { show: false } }], usd, acts), [t, bar("cost_usd")]);
  const scores = fig("scores");
  scores.hidden = chart.scores.length === 0;
  if (chart.scores.length) {
    draw(scores, options(scores, chart.scores.map((n, i) => ({ label: n, stroke: SCORE_COLORS[i % SCORE_COLORS.length], width: 1.5, spanGaps: true })),
      (v) => (Math.abs(v) >= 100 ? count(v) : Number(v.toFixed(3)).toString()), acts, { y: {} }),
      [t, ...chart.scores.map((n) => chart.buckets.map((b) => b.scores[n] ?? null))]);
  }
  const total = chart.buckets.reduce((n, b) => n + b.runs, 0);
  const bucket = chart.range.bucket_seconds;
  const size = bucket % 86400 === 0 ? `${bucket / 86400} d` : bucket % 3600 === 0 ? `${bucket / 3600} h` : `${bucket / 60} min`;
  document.getElementById("chart-range").textContent =
    `${count(total)} run${total === 1 ? "" : "s"} from ${chart.range.from.replace("T", " ").slice(0, 16)} to ${chart.range.to.replace("T", " ").slice(0, 16)} UTC, by ${size}` +
    (acts.length ? ` · ${acts.length} config activation${acts.length === 1 ? "" : "s"} marked` : "");
  const list = document.getElementById("chart-activations");
  list.replaceChildren(...acts.map((a) => Object.assign(document.createElement("li"), { textContent: `${a.agent} v${a.version} · ${a.at.replace("T", " ").slice(0, 16)} UTC` })));
  writeTable(chart);
  Object.assign(root.dataset, { state: "ready", buckets: String(chart.buckets.length), totalRuns: String(total), bucketSeconds: String(bucket) });
}

let busy = false;
let again = false;
let timer = null;
async function load() {
  if (busy || timer) { again = true; return; }
  busy = true;
  try {
    const res = await fetch(root.dataset.src, { credentials: "same-origin", headers: { accept: "application/json" } });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    render(await res.json());
  } catch (err) {
    root.dataset.state = "failed";
    document.getElementById("chart-range").textContent = `The chart could not be loaded (${err.message}).`;
  } finally {
    busy = false;
    timer = setTimeout(() => { timer = null; if (again) { again = false; load(); } }, REFRESH_MS);
  }
}

if (root) {
  load();
  onRunEvents(() => load());
  onReconnect(() => load());
  let width = root.clientWidth;
  new ResizeObserver(() => {
    if (Math.abs(root.clientWidth - width) < 8) return;
    width = root.clientWidth;
    for (const c of charts) c.setSize({ width: Math.max(240, c.root.parentElement.clientWidth), height: 150 });
  }).observe(root);
}

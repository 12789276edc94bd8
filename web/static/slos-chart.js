// The /slos page's charts (docs/ALERTS.md, SLOs): for each SLO, the budget left after each slice of its window (a
// line, left axis, %) and each slice's burn rate (bars, right axis, ×), from the points the page carries in
// data-points (alerts/slos/budget.ts burnOverTime), drawn with uPlot (served by the app: /static/vendor/uplot/).
import uPlot from "/static/vendor/uplot/uPlot.esm.js";

const bars = uPlot.paths.bars({ size: [0.7, 30], gap: 1 });

function draw(el) {
  const points = JSON.parse(el.dataset.points || "[]");
  if (points.length === 0) return;
  const xs = points.map((p) => Date.parse(p.start) / 1000);
  const width = () => Math.max(240, el.clientWidth);
  const chart = new uPlot({
    width: width(),
    height: 160,
    legend: { show: false },
    scales: { x: { time: true }, pct: { auto: true }, burn: { range: (u, min, max) => [0, Math.max(2, max)] } },
    axes: [
      { size: 28 },
      { scale: "pct", size: 50, values: (u, vals) => vals.map((v) => `${Math.round(v)}%`) },
      { scale: "burn", side: 1, size: 40, grid: { show: false }, values: (u, vals) => vals.map((v) => `${v}×`) },
    ],
    series: [
      {},
      { label: "budget left", scale: "pct", stroke: "#4f46e5", width: 2 },
      { label: "burn", scale: "burn", stroke: "#dc2626", fill: "rgba(220,38,38,.25)", paths: bars, points: { show: false } },
    ],
  }, [xs, points.map((p) => p.remaining * 100), points.map((p) => (p.runs > 0 ? p.burn : null))], el);
  el.dataset.state = "drawn";
  new ResizeObserver(() => chart.setSize({ width: width(), height: 160 })).observe(el);
}

for (const el of document.querySelectorAll(".slo-chart")) draw(el);

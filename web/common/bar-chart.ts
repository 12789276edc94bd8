/**
 * Geometry for a small inline-SVG bar chart (the template draws it; no chart library, no client script).
 * Values are scaled to a "nice" maximum so the axis labels read well.
 */
import { usd } from "../static/format.js";

export interface Bar { x: number; y: number; w: number; h: number; label: string; value: number; title: string; tick: boolean }
export interface BarChart {
  width: number; height: number; plot: { left: number; top: number; right: number; bottom: number };
  bars: Bar[]; gridlines: { y: number; label: string }[]; empty: boolean;
}

export function barChart(points: readonly { label: string; value: number; detail?: string }[], width = 960, height = 220): BarChart {
  const plot = { left: 56, top: 12, right: width - 8, bottom: height - 24 };
  const max = niceMax(Math.max(0, ...points.map((p) => p.value)));
  const slot = (plot.right - plot.left) / Math.max(1, points.length);
  const gap = Math.min(6, slot * 0.25);
  const every = Math.ceil(points.length / 10);
  const bars = points.map((p, i) => {
    const h = max > 0 ? ((plot.bottom - plot.top) * p.value) / max : 0;
    return {
      x: plot.left + i * slot + gap / 2,
      y: plot.bottom - h,
      w: Math.max(1, slot - gap),
      h,
      label: p.label.slice(5),
      value: p.value,
      title: `${p.label}: ${usd(p.value)}${p.detail ? ` · ${p.detail}` : ""}`,
      tick: i % every === 0 || i === points.length - 1,
    };
  });
  const gridlines = [0, 0.25, 0.5, 0.75, 1].map((f) => ({
    y: plot.bottom - (plot.bottom - plot.top) * f,
    label: axisLabel(max * f),
  }));
  return { width, height, plot, bars, gridlines, empty: points.every((p) => p.value === 0) };
}

/** Axis labels keep the significant digits a small range needs ($0.0125, not $0.01 twice). */
const axisLabel = (v: number): string => (v === 0 ? "$0" : v >= 1000 ? usd(v) : `$${Number(v.toPrecision(3))}`);

function niceMax(v: number): number {
  if (v <= 0) return 1;
  const exp = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (v <= m * exp) return m * exp;
  return 10 * exp;
}

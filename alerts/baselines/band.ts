/**
 * A learned band, from an agent's hourly history of one metric (stores/baselines/metric-hours.ts):
 *
 *   center = the median of the hours of this hour of the week (the same weekday and UTC hour) over the last 4 weeks;
 *   spread = max(1.4826 × their median absolute deviation, 5% of the center, the metric's floor);
 *   upper  = center + k × spread, k by sensitivity (low 6, medium 4, high 3); lower = center − k × spread.
 *
 * A metric worse when higher is judged against the upper edge, one worse when lower (a score's mean) the lower.
 *
 * The spread is that of hourly values; a live window computed from fewer runs (tool calls, scores) than an hour
 * usually has is noisier by the square root of the ratio (a mean's or a rate's sampling noise). Judging a window,
 * the spread is scaled by sqrt(hour volume / window volume) when that is above 1: without it, a 30-minute window of
 * an agent with a few runs a minute and a 2% error rate leaves its band by chance (bench:baselines measured ~25 false
 * error-rate alerts per agent per week before). A share's window spread is also at least its binomial noise.
 *
 * 1.4826 × MAD estimates a standard deviation when the values are normal, but one bad hour moves neither the median
 * nor the MAD, so past incidents do not widen the band. While the slot has fewer than SLOT_MIN_HOURS hours (an agent
 * a few weeks old) every hour of the 4 weeks stands in (no seasonality yet); with fewer than ALL_MIN_HOURS of those
 * the baseline is "learning" and nothing is judged.
 */
import type { BaselineStats } from "../../stores/baselines/metric-hours.js";
import { METRICS, type MetricName } from "./metrics.js";

export const HISTORY_DAYS = 28;
export const SLOT_MIN_HOURS = 3;
export const ALL_MIN_HOURS = 24;
/** Hours with fewer runs than this are too noisy to learn from. */
export const MIN_RUNS_PER_HOUR = 3;
const MAD_TO_SIGMA = 1.4826;
const RELATIVE_FLOOR = 0.05;

export const SENSITIVITIES = { low: 6, medium: 4, high: 3 } as const;
export type Sensitivity = keyof typeof SENSITIVITIES;

export type Band =
  | { readonly state: "learning"; readonly hours: number; readonly needed: number }
  | {
    readonly state: "ready";
    /** "slot": this hour of the week; "all": every hour (too little history for the slot). */
    readonly basis: "slot" | "all";
    /** How many hourly values the band was learned from. */
    readonly hours: number;
    readonly median: number;
    readonly mad: number;
    readonly spread: number;
    readonly upper: number;
    readonly lower: number;
  };

const DAYS = ["Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays", "Sundays"];

/** Whether a value is outside the band on the metric's worse side. */
export const outsideBand = (band: Extract<Band, { state: "ready" }>, metric: MetricName, value: number): boolean =>
  METRICS[metric].worse === "lower" ? value < band.lower : value > band.upper;

/** 0 for Monday 00:00 UTC … 167 for Sunday 23:00 UTC. */
export const hourOfWeek = (at: Date): number => ((at.getUTCDay() + 6) % 7) * 24 + at.getUTCHours();

/** "Tuesdays 14:00" (UTC). */
export const slotLabel = (how: number): string => `${DAYS[Math.floor(how / 24)]} ${String(how % 24).padStart(2, "0")}:00`;

/** `windowVolume`: the volume of the window the band will judge (none: a band for one typical hour). */
export function learnBand(stats: BaselineStats | undefined, metric: MetricName, sensitivity: Sensitivity, windowVolume?: number): Band {
  const basis = stats && stats.slot.n >= SLOT_MIN_HOURS ? "slot" : stats && stats.all.n >= ALL_MIN_HOURS ? "all" : undefined;
  if (!stats || !basis) return { state: "learning", hours: stats?.all.n ?? 0, needed: ALL_MIN_HOURS };
  const { n, median, mad } = stats[basis];
  const hourly = Math.max(MAD_TO_SIGMA * mad, RELATIVE_FLOOR * Math.abs(median), METRICS[metric].minSpread);
  const noisier = windowVolume && windowVolume > 0 && stats.hour_volume > windowVolume ? Math.sqrt(stats.hour_volume / windowVolume) : 1;
  // A share (error rate, tool error rate) of n trials also has at least its binomial noise, sqrt(p(1 − p) / n): the
  // MAD of 3 or 4 hours of a small rate is often near 0 (bench:baselines: most false alerts were error rates).
  const p = Math.min(1, Math.max(median, 1 / Math.max(1, stats.hour_volume)));
  const binomial = METRICS[metric].share && windowVolume && windowVolume > 0 ? Math.sqrt((p * (1 - p)) / windowVolume) : 0;
  const spread = Math.max(hourly * noisier, binomial);
  const k = SENSITIVITIES[sensitivity];
  return { state: "ready", basis, hours: n, median, mad, spread, upper: median + k * spread, lower: median - k * spread };
}

/**
 * A learned band, from an agent's hourly history of one metric (stores/baselines/metric-hours.ts):
 *
 *   center = the median of the hours of this hour of the week (the same weekday and UTC hour) over the last 4 weeks;
 *   spread = max(1.4826 × their median absolute deviation, 5% of the center, the metric's floor);
 *   upper  = center + k × spread, k by sensitivity (low 6, medium 4, high 3); lower = center − k × spread.
 *
 * A metric worse when higher is judged against the upper edge, one worse when lower (a score's mean) the lower.
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

export function learnBand(stats: BaselineStats | undefined, metric: MetricName, sensitivity: Sensitivity): Band {
  const basis = stats && stats.slot.n >= SLOT_MIN_HOURS ? "slot" : stats && stats.all.n >= ALL_MIN_HOURS ? "all" : undefined;
  if (!stats || !basis) return { state: "learning", hours: stats?.all.n ?? 0, needed: ALL_MIN_HOURS };
  const { n, median, mad } = stats[basis];
  const spread = Math.max(MAD_TO_SIGMA * mad, RELATIVE_FLOOR * Math.abs(median), METRICS[metric].minSpread);
  const k = SENSITIVITIES[sensitivity];
  return { state: "ready", basis, hours: n, median, mad, spread, upper: median + k * spread, lower: median - k * spread };
}

/**
 * A learned band, from an agent's hourly history of one metric (stores/baselines/metric-hours.ts):
 *
 *   center = the median of the hours of this hour of the week (the same weekday and UTC hour) over the last 4 weeks;
 *   spread = max(1.4826 × their median absolute deviation shrunk towards the all-hours one (BandRules.shrinkHours),
 *                5% of the center, the metric's floor);
 *   upper  = center + k × spread, k by sensitivity (low 6, medium 4, high 3); lower = center − k × spread.
 *
 * A metric worse when higher is judged against the upper edge, one worse when lower (a score's mean) the lower.
 *
 * The spread is that of hourly values; a live window computed from fewer runs (tool calls, scores) than an hour
 * usually has is noisier by the square root of the ratio (a mean's or a rate's sampling noise). Judging a window,
 * the spread is scaled by sqrt(hour volume / window volume) when that is above 1: without it, a 30-minute window of
 * an agent with a few runs a minute and a 2% error rate leaves its band by chance (bench:baselines measured ~25 false
 * error-rate alerts per agent per week before). A share's window spread is also at least its binomial noise, read
 * from the binomial distribution itself (BandRules.exactShares). The trigger also waits for a metric to stay out of
 * band for a minute before it fires (confirm.ts).
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
/** How many hours of the slot the all-hours spread counts as (BandRules.shrinkHours). */
const SHRINK_HOURS = 4;

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

/**
 * The rules that keep a band from paging on noise, each switchable so bench:baselines can measure what it does
 * (docs/BENCHMARKS.md, bench:baselines). The trigger always uses BAND_RULES.
 */
export interface BandRules {
  /**
   * Shrinkage: the slot's spread is blended with the all-hours spread (relative to each median, so an agent's busy
   * and quiet hours compare) as if that were `shrinkHours` more hours of the slot: sqrt((n·slot² + s·all²) / (n + s)).
   * 0 keeps the slot's own MAD, which from 3 or 4 hours is often far below the real spread.
   */
  readonly shrinkHours: number;
  /** The least spread as a share of the center. */
  readonly relativeFloor: number;
  /**
   * A share's window is judged against the binomial distribution itself (the least count of failures as unlikely
   * as k spreads of a normal), at p = the larger of the slot's and the all-hours median; false: the normal
   * approximation sqrt(p(1 − p) / n), whose tail is far too thin for a few failures in a few dozen trials.
   */
  readonly exactShares: boolean;
}

export const BAND_RULES: BandRules = { shrinkHours: SHRINK_HOURS, relativeFloor: RELATIVE_FLOOR, exactShares: true };

/** `windowVolume`: the volume of the window the band will judge (none: a band for one typical hour). */
export function learnBand(stats: BaselineStats | undefined, metric: MetricName, sensitivity: Sensitivity, windowVolume?: number, rules: BandRules = BAND_RULES): Band {
  const basis = stats && stats.slot.n >= SLOT_MIN_HOURS ? "slot" : stats && stats.all.n >= ALL_MIN_HOURS ? "all" : undefined;
  if (!stats || !basis) return { state: "learning", hours: stats?.all.n ?? 0, needed: ALL_MIN_HOURS };
  const { n, median, mad } = stats[basis];
  const own = MAD_TO_SIGMA * mad;
  const hourly = Math.max(basis === "slot" ? shrunk(own, n, median, stats.all, rules.shrinkHours) : own, rules.relativeFloor * Math.abs(median), METRICS[metric].minSpread);
  const noisier = windowVolume && windowVolume > 0 && stats.hour_volume > windowVolume ? Math.sqrt(stats.hour_volume / windowVolume) : 1;
  // A share (error rate, tool error rate) of n trials also has at least its binomial noise: the MAD of 3 or 4 hours
  // of a small rate is often near 0 (bench:baselines: most false alerts were error rates).
  const k = SENSITIVITIES[sensitivity];
  const binomial = METRICS[metric].share && windowVolume && windowVolume > 0 ? binomialSpread(stats, median, windowVolume, k, rules.exactShares) : 0;
  const spread = Math.max(hourly * noisier, binomial);
  return { state: "ready", basis, hours: n, median, mad, spread, upper: median + k * spread, lower: median - k * spread };
}

/** The slot's spread blended with the all-hours one, scaled to the slot's median (BandRules.shrinkHours). */
function shrunk(own: number, n: number, median: number, all: BaselineStats["all"], shrinkHours: number): number {
  if (shrinkHours <= 0 || !(all.n > n)) return own;
  const prior = MAD_TO_SIGMA * all.mad * (all.median > 0 && median > 0 ? median / all.median : 1);
  return Math.sqrt((n * own * own + shrinkHours * prior * prior) / (n + shrinkHours));
}

/** The upper tail of a standard normal at k spreads: how unlikely a count must be to leave the band. */
const NORMAL_TAIL: Readonly<Record<number, number>> = { 3: 1.35e-3, 4: 3.17e-5, 6: 9.87e-10 };

/** A share's spread from its binomial noise in a window of n trials (BandRules.exactShares). */
function binomialSpread(stats: BaselineStats, median: number, n: number, k: number, exact: boolean): number {
  if (!exact) {
    const p = Math.min(1, Math.max(median, 1 / Math.max(1, stats.hour_volume)));
    return Math.sqrt((p * (1 - p)) / n);
  }
  const p = Math.min(1, Math.max(median, stats.all.n > 0 ? stats.all.median : 0, 1 / Math.max(1, stats.hour_volume)));
  if (p >= 1) return 0;
  const alpha = NORMAL_TAIL[k] ?? 3.17e-5;
  // P(X ≥ c) for c = 0, 1, …: the first c whose tail is at most alpha is the least count that fires.
  let pmf = Math.pow(1 - p, n), below = 0, c = 0;
  const odds = p / (1 - p);
  while (c < n && 1 - below > alpha) {
    below += pmf;
    pmf *= ((n - c) / (c + 1)) * odds;
    c++;
  }
  // The band's edge sits half a failure below that count: c failures leave it, c − 1 do not.
  return Math.max(0, ((c - 0.5) / n - median) / k);
}

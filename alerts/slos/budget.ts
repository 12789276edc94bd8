/**
 * An SLO's error budget and burn rates, from run tallies (alerts/slos/tallies.ts). The budget of a window is the 1 − target
 * share of its runs allowed to be bad (for a score's mean: the shortfall from 1 its scores may add up to); the burn rate of a window is its bad share over that allowance (1 = spending
 * the budget exactly as fast as the window allows). Multi-window burn-rate alerts as in the Google SRE workbook
 * ("Alerting on SLOs", for a 30-day objective): fast when both the last hour and the last 5 minutes burn at 14.4× or
 * more (2% of the month's budget in an hour), slow when both the last 6 hours and the last 30 minutes burn at 6× or
 * more (5% in 6 hours). The short window makes the alert stop soon after the burning does.
 */
import type { RunTally, Slo } from "../../stores/slos.js";

export const BURN_ALERTS = {
  fast: { long: 3600, short: 300, threshold: 14.4, longLabel: "1 h", shortLabel: "5 min" },
  slow: { long: 6 * 3600, short: 1800, threshold: 6, longLabel: "6 h", shortLabel: "30 min" },
} as const;
export type BurnSpeed = keyof typeof BURN_ALERTS;

/** The windows an SLO is read over, in seconds: its own, then the four of the burn-rate alerts. */
export const sloWindows = (slo: Pick<Slo, "window_days">): number[] =>
  [slo.window_days * 86_400, BURN_ALERTS.fast.long, BURN_ALERTS.fast.short, BURN_ALERTS.slow.long, BURN_ALERTS.slow.short];

export interface SloStatus {
  /** Good share of the SLO's window (null without runs). */
  readonly sli: number | null;
  readonly budget: {
    readonly runs: number;
    readonly bad: number;
    /** Bad runs the window allows: runs × (1 − target). */
    readonly allowed_bad: number;
    /** Share of the budget spent (bad / allowed), and what is left (1 − spent; negative when overspent). */
    readonly spent: number;
    readonly remaining: number;
  };
  /** Burn rate and its tally per alert window. */
  readonly burn: Readonly<Record<"1h" | "5m" | "6h" | "30m", { readonly runs: number; readonly bad: number; readonly rate: number }>>;
  readonly alerts: Readonly<Record<BurnSpeed, boolean>>;
}

const rate = (t: RunTally, target: number): number => (t.total > 0 ? t.bad / t.total / (1 - target) : 0);

/** `tallies` in the order of sloWindows. */
export function sloStatus(slo: Pick<Slo, "target">, tallies: readonly RunTally[]): SloStatus {
  const [all, h1, m5, h6, m30] = tallies as [RunTally, RunTally, RunTally, RunTally, RunTally];
  const allowed = all.total * (1 - slo.target);
  const spent = all.total > 0 ? all.bad / allowed : 0;
  const burn = {
    "1h": { runs: h1.total, bad: h1.bad, rate: rate(h1, slo.target) },
    "5m": { runs: m5.total, bad: m5.bad, rate: rate(m5, slo.target) },
    "6h": { runs: h6.total, bad: h6.bad, rate: rate(h6, slo.target) },
    "30m": { runs: m30.total, bad: m30.bad, rate: rate(m30, slo.target) },
  };
  return {
    sli: all.total > 0 ? (all.total - all.bad) / all.total : null,
    budget: { runs: all.total, bad: all.bad, allowed_bad: allowed, spent, remaining: 1 - spent },
    burn,
    alerts: {
      fast: burn["1h"].rate >= BURN_ALERTS.fast.threshold && burn["5m"].rate >= BURN_ALERTS.fast.threshold,
      slow: burn["6h"].rate >= BURN_ALERTS.slow.threshold && burn["30m"].rate >= BURN_ALERTS.slow.threshold,
    },
  };
}

/** "99% of runs succeed over 30 days", "95% of runs end within 10 s over 7 days", "mean correctness ≥ 0.8 over 30 days". */
export function objectiveInWords(slo: Pick<Slo, "objective" | "target" | "threshold_seconds" | "score_name" | "window_days">): string {
  const over = `over ${slo.window_days} day${slo.window_days === 1 ? "" : "s"}`;
  if (slo.objective === "score_mean") return `mean ${slo.score_name} ≥ ${+slo.target.toFixed(4)} ${over}`;
  return `${+(slo.target * 100).toFixed(3)}% of runs ${slo.objective === "latency" ? `end within ${slo.threshold_seconds} s` : "succeed"} ${over}`;
}

/** One slice of an SLO's window: its tally, its burn rate, and the budget left at its end. */
export interface BurnPoint {
  readonly start: string;
  readonly runs: number;
  readonly bad: number;
  readonly burn: number;
  readonly remaining: number;
}

/**
 * The burn over the window (slices of whole hours: tallies.ts sloSlices, oldest first): each slice's burn rate, and the budget left
 * after it as a share of the whole window's allowance (runs × (1 − target) of every slice), so the last point is the
 * budget's `remaining` now.
 */
export function burnOverTime(slo: Pick<Slo, "target">, slices: readonly (RunTally & { readonly start: string })[]): BurnPoint[] {
  const allowed = slices.reduce((n, s) => n + s.total, 0) * (1 - slo.target);
  let spent = 0;
  return slices.map((s) => {
    spent += s.bad;
    return { start: s.start, runs: s.total, bad: s.bad, burn: rate(s, slo.target), remaining: allowed > 0 ? 1 - spent / allowed : 1 };
  });
}

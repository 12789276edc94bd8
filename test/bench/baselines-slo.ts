/**
 * The SLO stream of bench:baselines and its burn alerts worked out by hand: a steady 50 runs a minute against 99%
 * success over 30 days, with two error bursts. test/bench/baselines.ts judges it minute by minute in process
 * (alerts/slos/budget.ts on tallies counted here); test/bench/baselines-ingest.ts sends it through ingest and judges
 * it with the slo_burn_rate trigger, reading the tallies through ClickHouse.
 *
 * Burst A: 15 bad of 50 (30%) for 60 min from minute 600. Fast: the 1 h window reaches 14.4% bad after
 *   0.30 × e / 60 ≥ 0.144 → e ≥ 28.8 → fires at +29 min; the 5 min window drops under 14.4% once it holds at most
 *   2 burst minutes (30 of 250 = 12%) → resolves at +63 min. Slow: the 6 h window needs 0.30 × e / 360 ≥ 0.06 →
 *   e ≥ 72 > 60: never.
 * Burst B: 7 bad of 50 (14%) for 240 min from minute 2000. Fast: 14% < 14.4%: never. Slow: 0.14 × e / 360 ≥ 0.06
 *   → e ≥ 154.3 → fires at +155 min; the 30 min window drops under 6% once it holds at most 12 burst minutes
 *   (84 of 1500 = 5.6%; 13 give 6.07%) → resolves at +258 min.
 * "At minute m" means judged over the runs of minutes before m.
 */
import { BURN_ALERTS, sloStatus } from "../../alerts/slos/budget.js";

export const SLO_TARGET = 0.99;
export const SLO_WINDOW_DAYS = 30;
export const SLO_RUNS_PER_MINUTE = 50;
/** The stream's length in minutes: both bursts have fired and resolved before it ends. */
export const SLO_MINUTES = 3000;
export type Speed = "fast" | "slow";
export type FireResolve = Record<Speed, { fire?: number; resolve?: number }>;

export const SLO_REFERENCE: FireResolve = { fast: { fire: 600 + 29, resolve: 600 + 63 }, slow: { fire: 2000 + 155, resolve: 2000 + 258 } };

/** The bad runs among minute m's. */
export const sloBad = (m: number): number => (m >= 600 && m < 660 ? 15 : m >= 2000 && m < 2240 ? 7 : 0);

/** The stream judged at every minute in process: alerts/slos/budget.ts on tallies counted here. */
export function judgeSloInProcess(): FireResolve {
  const tally = (now: number, minutes: number) => {
    let b = 0;
    for (let m = Math.max(0, now - minutes); m < now; m++) b += sloBad(m);
    return { total: SLO_RUNS_PER_MINUTE * Math.min(now, minutes), bad: b };
  };
  const seen: FireResolve = { fast: {}, slow: {} };
  const state = { fast: false, slow: false };
  for (let now = 1; now <= SLO_MINUTES; now++) {
    const s = sloStatus({ target: SLO_TARGET }, [tally(now, SLO_WINDOW_DAYS * 1440), tally(now, 60), tally(now, 5), tally(now, 360), tally(now, 30)]);
    for (const speed of ["fast", "slow"] as const) {
      if (s.alerts[speed] === state[speed]) continue;
      state[speed] = s.alerts[speed];
      if (s.alerts[speed]) seen[speed].fire ??= now;
      else seen[speed].resolve ??= now;
    }
  }
  return seen;
}

/** "fast: fired 629, resolved 663; reference 629, 663: match" per speed whose reference ends within `minutes`. */
export function sloLines(seen: FireResolve, minutes = SLO_MINUTES): string[] {
  return (["fast", "slow"] as const).filter((speed) => SLO_REFERENCE[speed].resolve! <= minutes).map((speed) => {
    const ok = seen[speed].fire === SLO_REFERENCE[speed].fire && seen[speed].resolve === SLO_REFERENCE[speed].resolve;
    return `${speed}: fired ${seen[speed].fire}, resolved ${seen[speed].resolve}; reference ${SLO_REFERENCE[speed].fire}, ${SLO_REFERENCE[speed].resolve}: ${ok ? "match" : "MISMATCH"}`;
  });
}

export const sloHeading = `SLO burn alerts (${SLO_TARGET * 100}% over ${SLO_WINDOW_DAYS} days, thresholds ${BURN_ALERTS.fast.threshold}× / ${BURN_ALERTS.slow.threshold}×), minute of firing and resolving, measured vs by hand:`;

/**
 * The tallies SLO budgets and burn rates are judged by, for many SLOs at once (stores/slo-hours.ts): keeps the
 * project's SLO hours rolled up, then reads every SLO asked for in three ClickHouse queries, whatever their number
 * (the sweep of slo_burn_rate rules, GET /api/slos and the /slos page all read this way).
 *
 * The roll-up writes the hours that left the raw tail (6 h) since it last ran, and re-rolls the RE_ROLL_HOURS before
 * them again, so a run whose end arrives up to a day late into an hour already rolled is counted again within
 * ROLL_INTERVAL_MS (before that its hour is still read raw when it is in the tail). A project seen for the first time
 * by this process starts from the latest hour stored, or backfills the longest window (90 days). At most once per
 * ROLL_INTERVAL_MS per project, store and process; several processes rolling the same hour write the same values (the
 * newest row wins on read). Callers at the same time share the roll-up under way.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { RunTally, Slo } from "../../stores/slos.js";
import { latestSloHour, rawTailStart, readSloTallies, rollUpSloHours, sloWindowStart, type SloTallies, type TalliedSlo } from "../../stores/slo-hours.js";
import { sloWindows } from "./budget.js";

const HOUR_MS = 3_600_000;
const ROLL_INTERVAL_MS = 5 * 60_000;
const RE_ROLL_HOURS = 24;
const BACKFILL_HOURS = 90 * 24;

/** Per store and project: the end of the hours rolled up (exclusive) and when that was done; the roll-up under way. */
const rolled = new WeakMap<ClickHouse, Map<number, { until: number; at: number }>>();
const running = new WeakMap<ClickHouse, Map<number, Promise<void>>>();

const mapOf = <V>(m: WeakMap<ClickHouse, Map<number, V>>, ch: ClickHouse): Map<number, V> => {
  let inner = m.get(ch);
  if (!inner) m.set(ch, (inner = new Map()));
  return inner;
};

export function rollUpSloProject(ch: ClickHouse, projectId: number, now: Date): Promise<void> {
  const under = mapOf(running, ch);
  const busy = under.get(projectId);
  if (busy) return busy;
  const done = rollUp(ch, projectId, now).finally(() => under.delete(projectId));
  under.set(projectId, done);
  return done;
}

async function rollUp(ch: ClickHouse, projectId: number, now: Date): Promise<void> {
  const end = rawTailStart(now);
  const memo = mapOf(rolled, ch);
  const last = memo.get(projectId);
  if (last && last.until >= end && now.getTime() - last.at < ROLL_INTERVAL_MS) return;
  let until = last?.until;
  if (until === undefined) {
    const latest = await latestSloHour(ch, projectId);
    until = latest ? latest.getTime() + HOUR_MS : end - BACKFILL_HOURS * HOUR_MS;
  }
  const from = Math.max(until - RE_ROLL_HOURS * HOUR_MS, end - BACKFILL_HOURS * HOUR_MS);
  if (from < end) await rollUpSloHours(ch, { projectId, from: new Date(from), to: new Date(end) });
  memo.set(projectId, { until: end, at: now.getTime() });
}

/** Each SLO's tallies at `now`: its own window, then the burn-rate windows (the order of budget.ts sloWindows). */
export async function sloTalliesAt(ch: ClickHouse, projectId: number, slos: readonly TalliedSlo[], now: Date): Promise<SloTallies[]> {
  if (slos.length === 0) return [];
  await rollUpSloProject(ch, projectId, now);
  return readSloTallies(ch, projectId, slos, now, sloWindows({ window_days: 1 }).slice(1));
}

/**
 * The window's hours in `slices` slices of whole hours, oldest first (the page's burn over time): a day each for
 * 30 days, an hour each for 1 day; the last slice is shorter when the hours do not divide evenly.
 */
export function sloSlices(slo: Pick<Slo, "window_days">, tallies: SloTallies, now: Date, slices: number): (RunTally & { readonly start: string })[] {
  const hours = slo.window_days * 24;
  const per = Math.ceil(hours / slices);
  const start = sloWindowStart(slo, now);
  const out = Array.from({ length: Math.ceil(hours / per) }, (_, i) => ({ start: new Date(start + i * per * HOUR_MS).toISOString(), total: 0, bad: 0 }));
  for (const h of tallies.hours) {
    const slice = out[Math.floor((h.start - start) / HOUR_MS / per)];
    if (!slice) continue;
    slice.total += h.total;
    slice.bad += h.bad;
  }
  return out;
}

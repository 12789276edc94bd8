/**
 * Keeps a project's hourly aggregates (run metrics, tool error rate, score means; agent-wide and per environment and
 * config version) current before its baselines are read: rolls up the whole hours that ended since the last roll-up,
 * and the one before them again (runs that ended late, a pipeline that lagged). A project seen for the first time by
 * this process starts from the latest hour stored (or HISTORY_DAYS back, the backfill of a project's first anomaly
 * rule, and of the per-dimension rows of an install upgraded past migration 271). At most once per ROLL_INTERVAL_MS
 * per project and process: the sweep runs every 15 s, an hour ends once an hour. Several processes rolling the same
 * hour write the same values (the newest row wins on read), so no lock is needed. Callers at the same time in one
 * process (the agent page explains every metric at once) share the roll-up under way instead of each doing it. */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { latestRolledHour, rollUpHours } from "../../stores/baselines/metric-hours.js";
import { rollUpEventHours } from "../../stores/baselines/event-metrics.js";
import { latestDimensionHour, rollUpDimensionHours } from "../../stores/baselines/dimension-hours.js";
import { HISTORY_DAYS } from "./band.js";
import { hoursWritten } from "./stats-cache.js";

const HOUR_MS = 3_600_000;
const ROLL_INTERVAL_MS = 5 * 60_000;

const startOfHour = (ms: number): number => Math.floor(ms / HOUR_MS) * HOUR_MS;

/** Per project: the end of the hours rolled up (exclusive) and when that was done. */
const rolled = new Map<number, { until: number; at: number }>();
/** Per project: the roll-up under way in this process. */
const running = new Map<number, Promise<void>>();

export function rollUpProject(ch: ClickHouse, projectId: number, now: Date): Promise<void> {
  const under = running.get(projectId);
  if (under) return under;
  const done = rollUp(ch, projectId, now).finally(() => running.delete(projectId));
  running.set(projectId, done);
  return done;
}

async function rollUp(ch: ClickHouse, projectId: number, now: Date): Promise<void> {
  const end = startOfHour(now.getTime());
  const last = rolled.get(projectId);
  if (last && last.until >= end && now.getTime() - last.at < ROLL_INTERVAL_MS) return;
  const earliest = end - HISTORY_DAYS * 24 * HOUR_MS;
  // Where each table's roll-up starts: the agent-wide rows and the per-dimension rows keep their own latest hour, so
  // a table added later (migration 271) is filled from HISTORY_DAYS of runs on its first roll-up.
  const start = async (latest: () => Promise<Date | undefined>): Promise<number> => {
    const until = last?.until ?? ((await latest())?.getTime() ?? earliest - HOUR_MS) + HOUR_MS;
    return Math.max(until - HOUR_MS, earliest);
  };
  const from = await start(() => latestRolledHour(ch, projectId));
  const dimensionsFrom = await start(() => latestDimensionHour(ch, projectId));
  if (from < end) {
    const range = { projectId, from: new Date(from), to: new Date(end) };
    await rollUpHours(ch, range);
    await rollUpEventHours(ch, range);
  }
  if (dimensionsFrom < end) await rollUpDimensionHours(ch, { projectId, from: new Date(dimensionsFrom), to: new Date(end) });
  // The cached statistics (agent-wide and per environment) are read again once either table was written.
  if (from < end || dimensionsFrom < end) hoursWritten(ch, projectId);
  rolled.set(projectId, { until: end, at: now.getTime() });
}

/** Forgets what this process rolled up (tests that reuse a project id on a fresh store). */
export const forgetRollUps = (): void => rolled.clear();

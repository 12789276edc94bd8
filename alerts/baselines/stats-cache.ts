/**
 * The baseline statistics the anomaly trigger judges with, kept between sweeps: they are read from whole hours before
 * the current one (stores/baselines/metric-hours.ts baselineStats), so they change only when the hour turns or a
 * roll-up writes hours (alerts/baselines/rollup.ts calls hoursWritten). The sweep runs every 15 s and each rule read
 * them again — one query over up to 28 days of hours per rule and sweep; now one per rule, hour and roll-up (at most
 * one every 5 minutes per project).
 *
 * Keyed by store, project, metric, agent (or every agent), hour of the week and the hours read: the hour is in the key,
 * so the hour turning is a miss; a roll-up moves the project's generation, so every older entry is a miss. At most
 * MAX_ENTRIES are kept, the least recently used going first. Concurrent sweeps of the same key share one read; a read
 * that failed is forgotten. Rows written by hand (insertMetricHours: imports, seeds) are seen at the next roll-up or
 * hour. Another process's roll-up writes the same rows as this one's (rollup.ts), and this process rolls up the same
 * hours within its own interval.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { baselineStats, type BaselineStats } from "../../stores/baselines/metric-hours.js";

export const MAX_ENTRIES = 5_000;

type Query = Parameters<typeof baselineStats>[1];

interface Entry {
  readonly generation: number;
  readonly stats: Promise<BaselineStats[]>;
}

const cached = new WeakMap<ClickHouse, Map<string, Entry>>();
const generations = new WeakMap<ClickHouse, Map<number, number>>();
let reads = 0;

const generationOf = (ch: ClickHouse, projectId: number): number => generations.get(ch)?.get(projectId) ?? 0;

/** A roll-up wrote hours of the project: its statistics are read again. */
export function hoursWritten(ch: ClickHouse, projectId: number): void {
  let g = generations.get(ch);
  if (!g) generations.set(ch, (g = new Map()));
  g.set(projectId, generationOf(ch, projectId) + 1);
}

/** baselineStats, from the cache when nothing was written since it was read. */
export function cachedBaselineStats(ch: ClickHouse, q: Query): Promise<BaselineStats[]> {
  return cachedStats(ch, q.projectId, ["all", q.metric, q.agent ?? "\u0000all", q.hourOfWeek, q.since.getTime(), q.until.getTime(), q.minRuns], () => baselineStats(ch, q));
}

/**
 * The statistics `read` gives, from the cache when nothing was written to the project's hours since they were read:
 * `key` names the read (its kind and every parameter). The agent-wide statistics and one environment's
 * (dimensions.ts environmentStats) share the cache, its bound and its invalidation.
 */
export function cachedStats<T extends BaselineStats>(ch: ClickHouse, projectId: number, key: readonly (string | number)[], read: () => Promise<T[]>): Promise<T[]> {
  let entries = cached.get(ch);
  if (!entries) cached.set(ch, (entries = new Map()));
  const k = [projectId, ...key].join("\u0001");
  const generation = generationOf(ch, projectId);
  const hit = entries.get(k);
  if (hit) entries.delete(k);
  if (hit && hit.generation === generation) {
    entries.set(k, hit);
    return hit.stats as Promise<T[]>;
  }
  reads++;
  const stats = read();
  const entry = { generation, stats };
  entries.set(k, entry);
  stats.catch(() => { if (entries.get(k) === entry) entries.delete(k); });
  while (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!);
  return stats;
}

/** How many times the statistics were read from ClickHouse (not the cache) in this process: a figure for tests and benches. */
export const baselineStatsReads = (): number => reads;

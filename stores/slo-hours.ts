/**
 * SLO tallies from hours (ClickHouse slo_hours, migration 280; the same SQL on chDB and a server): the roll-up that
 * fills the hours from agent_runs and scores, and the read of many SLOs' windows at once — whole hours that ended
 * before the raw tail from slo_hours, the tail (the last RAW_TAIL_HOURS whole hours and the current one) from the
 * runs and scores themselves. What is counted is what stores/slos.ts sloTallies counts from the runs alone (its
 * reference, compared in alerts/slos/tallies.test.ts): ended production runs by their end, scores by their creation.
 *
 * An SLO's window is counted in clock hours: the window_days × 24 hours up to now, the current one included (its
 * start is a whole hour, window_days × 24 − 1 hours before the current one's), so every hour is whole in it.
 * A latency SLO's threshold is its own: an hour keeps every run's duration (sorted), and a read counts the ones over
 * each threshold asked for, so a changed threshold or another SLO on the same agent needs no roll-up of its own.
 */
import type { ClickHouse } from "../core/ports/clickhouse.js";
import type { RunTally, Slo } from "./slos.js";
import { RUN_DURATION_MS, RUN_ENDED_AT, toChTime } from "./runs/run-query.js";

const HOUR_MS = 3_600_000;
/** Whole hours before the current one read from the runs: the burn windows (up to 6 h) and late runs. */
export const RAW_TAIL_HOURS = 6;

const startOfHour = (ms: number): number => Math.floor(ms / HOUR_MS) * HOUR_MS;
/** Where an SLO's window starts at `now` (ms): a whole hour. */
export const sloWindowStart = (slo: Pick<Slo, "window_days">, now: Date): number => startOfHour(now.getTime()) - (slo.window_days * 24 - 1) * HOUR_MS;
/** Where the raw tail starts at `now` (ms): hours before it are read from slo_hours. */
export const rawTailStart = (now: Date): number => startOfHour(now.getTime()) - RAW_TAIL_HOURS * HOUR_MS;

const chTime = (ms: number): string => toChTime(new Date(ms).toISOString());
const chHour = (ms: number): string => chTime(ms).slice(0, 19);

const SHORTFALL = "1 - least(greatest(value_number, 0), 1)";

/** Rolls up the whole UTC hours in [from, to) of a project (every agent, every score); a re-rolled hour replaces its rows. */
export async function rollUpSloHours(ch: ClickHouse, q: { readonly projectId: number; readonly from: Date; readonly to: Date }): Promise<void> {
  const params = { pid: q.projectId, from: chTime(q.from.getTime()), to: chTime(q.to.getTime()) };
  await ch.exec(
    `INSERT INTO slo_hours (project_id, agent_name, kind, score_name, hour, total, bad, latency_ms, rolled_at)
     SELECT {pid:UInt64}, agent_name, 'runs', '', toStartOfHour(${RUN_ENDED_AT}) AS h, count(), countIf(status = 'error'), arraySort(groupArray(${RUN_DURATION_MS})), now64(3)
       FROM agent_runs FINAL
      WHERE project_id = {pid:UInt64} AND status IN ('success', 'error') AND experiment_id = ''
        AND last_event_at >= {from:DateTime64(3, 'UTC')}
        AND ${RUN_ENDED_AT} >= {from:DateTime64(3, 'UTC')} AND ${RUN_ENDED_AT} < {to:DateTime64(3, 'UTC')}
      GROUP BY agent_name, h`,
    params,
  );
  // A score on a run is activity on it: a run scored in [from, to) was last active at or after `from`.
  await ch.exec(
    `INSERT INTO slo_hours (project_id, agent_name, kind, score_name, hour, total, bad, latency_ms, rolled_at)
     SELECT {pid:UInt64}, r.agent_name, 'score', s.name, s.h, count(), sum(s.shortfall), CAST([] AS Array(Int64)), now64(3)
       FROM (SELECT run_id, name, toStartOfHour(created_at) AS h, ${SHORTFALL} AS shortfall FROM scores FINAL
              WHERE project_id = {pid:UInt64} AND value_type IN ('number', 'boolean')
                AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}) AS s
      INNER JOIN (SELECT run_id, agent_name FROM agent_runs FINAL
              WHERE project_id = {pid:UInt64} AND experiment_id = '' AND last_event_at >= {from:DateTime64(3, 'UTC')}) AS r ON s.run_id = r.run_id
      GROUP BY r.agent_name, s.name, s.h`,
    params,
  );
}

/** The latest hour rolled up for a project (its start), or undefined before the first roll-up. */
export async function latestSloHour(ch: ClickHouse, projectId: number): Promise<Date | undefined> {
  const [row] = await ch.query<{ latest: string | number; n: string | number }>(
    `SELECT toUnixTimestamp(max(hour)) AS latest, count() AS n FROM slo_hours WHERE project_id = {pid:UInt64}`, { pid: projectId },
  );
  return row && Number(row.n) > 0 ? new Date(Number(row.latest) * 1000) : undefined;
}

export type TalliedSlo = Pick<Slo, "agent_name" | "objective" | "threshold_seconds" | "score_name" | "window_days">;

export interface SloTallies {
  /** The SLO's own window, then each of the short windows asked for, in their order. */
  readonly windows: readonly RunTally[];
  /** The window's hours with runs (or scores), oldest first; `start` in ms. */
  readonly hours: readonly (RunTally & { readonly start: number })[];
}

type Num = string | number;
interface Row { agent_name: string; score_name?: string; h: Num; w?: Num; total: Num; bad: Num; over: Num[] }

/**
 * The tallies of each SLO at `now`, in three reads whatever their number (hours, the runs' tail, the scores' tail).
 * `shortWindowsSeconds` (the burn-rate windows) must lie within the raw tail.
 */
export async function readSloTallies(ch: ClickHouse, projectId: number, slos: readonly TalliedSlo[], now: Date, shortWindowsSeconds: readonly number[]): Promise<SloTallies[]> {
  if (slos.length === 0) return [];
  const tail = rawTailStart(now);
  const nowMs = now.getTime();
  const short = [...new Set(shortWindowsSeconds.map((s) => Math.floor(s)))].sort((a, b) => a - b);
  if (short.some((s) => nowMs - s * 1000 < tail)) throw new Error(`a short window reaches past the raw tail (${RAW_TAIL_HOURS} h)`);
  const agents = [...new Set(slos.map((s) => s.agent_name))];
  const scores = [...new Set(slos.flatMap((s) => (s.objective === "score_mean" && s.score_name ? [s.score_name] : [])))];
  const thresholds = [...new Set(slos.flatMap((s) => (s.objective === "latency" ? [(s.threshold_seconds ?? 0) * 1000] : [])))];
  const since = Math.min(...slos.map((s) => sloWindowStart(s, now)));
  const params = { pid: projectId, agents, scores, thresholds, since: chHour(since), until: chHour(tail), tail: chTime(tail), now: chTime(nowMs) };
  const window = (at: string): string => (short.length === 0 ? "0" : `multiIf(${short.map((s, i) => `${at} >= {now:DateTime64(3, 'UTC')} - INTERVAL ${s} SECOND, ${i}`).join(", ")}, ${short.length})`);
  const needsRuns = slos.some((s) => s.objective !== "score_mean");
  const [hourRows, runRows, scoreRows] = await Promise.all([
    ch.query<Row & { kind: string }>(
      `SELECT agent_name, kind, score_name, toUnixTimestamp(hour) AS h, total, bad,
              ${thresholds.length > 0 ? "arrayMap(t -> arrayCount(x -> x > t, latency_ms), {thresholds:Array(Float64)})" : "[]"} AS over
         FROM slo_hours FINAL
        WHERE project_id = {pid:UInt64} AND has({agents:Array(String)}, agent_name)
          AND (kind = 'runs' OR (kind = 'score' AND has({scores:Array(String)}, score_name)))
          AND hour >= {since:DateTime('UTC')} AND hour < {until:DateTime('UTC')}`,
      params,
    ),
    needsRuns ? ch.query<Row>(
      `SELECT agent_name, toUnixTimestamp(toStartOfHour(${RUN_ENDED_AT})) AS h, ${window(RUN_ENDED_AT)} AS w, count() AS total, countIf(status = 'error') AS bad,
              ${thresholds.length > 0 ? `sumForEach(arrayMap(t -> toUInt64(${RUN_DURATION_MS} > t), {thresholds:Array(Float64)}))` : "[]"} AS over
         FROM agent_runs FINAL
        WHERE project_id = {pid:UInt64} AND has({agents:Array(String)}, agent_name) AND status IN ('success', 'error') AND experiment_id = ''
          AND last_event_at >= {tail:DateTime64(3, 'UTC')}
          AND ${RUN_ENDED_AT} >= {tail:DateTime64(3, 'UTC')} AND ${RUN_ENDED_AT} <= {now:DateTime64(3, 'UTC')}
        GROUP BY agent_name, h, w`,
      params,
    ) : Promise.resolve([]),
    scores.length > 0 ? ch.query<Row>(
      `SELECT r.agent_name AS agent_name, s.name AS score_name, toUnixTimestamp(toStartOfHour(s.created_at)) AS h, ${window("s.created_at")} AS w,
              count() AS total, sum(s.shortfall) AS bad, [] AS over
         FROM (SELECT run_id, name, created_at, ${SHORTFALL} AS shortfall FROM scores FINAL
                WHERE project_id = {pid:UInt64} AND has({scores:Array(String)}, name) AND value_type IN ('number', 'boolean')
                  AND created_at >= {tail:DateTime64(3, 'UTC')} AND created_at <= {now:DateTime64(3, 'UTC')}) AS s
        INNER JOIN (SELECT run_id, agent_name FROM agent_runs FINAL
                WHERE project_id = {pid:UInt64} AND has({agents:Array(String)}, agent_name) AND experiment_id = ''
                  AND last_event_at >= {tail:DateTime64(3, 'UTC')}) AS r ON s.run_id = r.run_id
        GROUP BY agent_name, score_name, h, w`,
      params,
    ) : Promise.resolve([]),
  ]);
  return slos.map((slo) => talliesOf(slo, now, short, shortWindowsSeconds, thresholds, hourRows, runRows, scoreRows));
}

function talliesOf(
  slo: TalliedSlo, now: Date, short: readonly number[], asked: readonly number[], thresholds: readonly number[],
  hourRows: readonly (Row & { kind: string })[], runRows: readonly Row[], scoreRows: readonly Row[],
): SloTallies {
  const isScore = slo.objective === "score_mean";
  const mine = (r: Row): boolean => r.agent_name === slo.agent_name && (!isScore || r.score_name === slo.score_name);
  const overAt = slo.objective === "latency" ? thresholds.indexOf((slo.threshold_seconds ?? 0) * 1000) : -1;
  const badOf = (r: Row): number => (overAt >= 0 ? Number(r.over[overAt] ?? 0) : Number(r.bad));
  const start = sloWindowStart(slo, now);
  const byHour = new Map<number, { total: number; bad: number }>();
  const windowTally = short.map(() => ({ total: 0, bad: 0 }));
  const add = (r: Row): void => {
    const h = Number(r.h) * 1000;
    if (h < start) return;
    const hour = byHour.get(h) ?? { total: 0, bad: 0 };
    hour.total += Number(r.total);
    hour.bad += badOf(r);
    byHour.set(h, hour);
  };
  for (const r of hourRows) if (r.kind === (isScore ? "score" : "runs") && mine(r)) add(r);
  for (const r of isScore ? scoreRows : runRows) {
    if (!mine(r)) continue;
    add(r);
    // Windows nest (shortest first): a row of window w is in every window from w on.
    for (let i = Number(r.w ?? short.length); i < short.length; i++) {
      windowTally[i]!.total += Number(r.total);
      windowTally[i]!.bad += badOf(r);
    }
  }
  const hours = [...byHour.entries()].sort((a, b) => a[0] - b[0]).map(([h, t]) => ({ start: h, total: t.total, bad: t.bad }));
  const own = hours.reduce((n, h) => ({ total: n.total + h.total, bad: n.bad + h.bad }), { total: 0, bad: 0 });
  return { windows: [own, ...asked.map((s) => windowTally[short.indexOf(Math.floor(s))]!)], hours };
}

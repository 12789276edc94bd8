/**
 * The hourly aggregates learned baselines are computed from (ClickHouse agent_metric_hours, migration 210), the same
 * SQL on chDB and a server: the roll-up that fills them from agent_runs, the baseline statistics read from them (the
 * median and MAD per agent for one hour of the week, and over all hours), and the same metrics over a live window of
 * the runs that ended in it. The statistics' meaning (bands, "learning") is alerts/baselines/.
 * Like the dashboard's aggregates (stores/runs/run-stats.ts), these count production runs: not the LLM judge's own
 * runs, not experiments'.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { NOT_JUDGE, NOT_JUDGE_PARAMS } from "../../core/events/judge-runs.js";
import { RUN_DURATION_MS, RUN_ENDED_AT, toChTime } from "../runs/run-query.js";

/** The metrics of a run an hour's row holds, and how each is computed over the runs that ended in it. */
export const RUN_METRICS = {
  error_rate: "countIf(status = 'error') / count()",
  latency_p50: `quantileExact(0.5)(${RUN_DURATION_MS}) / 1000`,
  latency_p95: `quantileExact(0.95)(${RUN_DURATION_MS}) / 1000`,
  cost_per_run: "avg(cost_usd)",
  tokens_per_run: "avg(total_tokens)",
} as const;
export type RunMetric = keyof typeof RUN_METRICS;
export const RUN_METRIC_NAMES = Object.keys(RUN_METRICS) as RunMetric[];

const chTime = (d: Date): string => toChTime(d.toISOString());
export const chHour = (d: Date): string => chTime(d).slice(0, 19);

/**
 * The production runs of a project that ended in [from, to); `last_event_at` bounds the read (its minmax index).
 * `environment` keeps one environment's runs ({environment:String}); `arrayJoin` comes between FROM and WHERE (the
 * dimensions of a run: stores/baselines/dimension-hours.ts).
 */
export const endedRuns = (agent: string | undefined, o: { readonly environment?: string; readonly arrayJoin?: string } = {}) =>
  `FROM agent_runs FINAL ${o.arrayJoin ?? ""}
   WHERE project_id = {pid:UInt64} AND status IN ('success', 'error') AND experiment_id = '' AND ${NOT_JUDGE}
     AND last_event_at >= {from:DateTime64(3, 'UTC')}
     AND ${RUN_ENDED_AT} >= {from:DateTime64(3, 'UTC')} AND ${RUN_ENDED_AT} < {to:DateTime64(3, 'UTC')}
     ${agent ? "AND agent_name = {agent:String}" : ""}
     ${o.environment !== undefined ? "AND environment = {environment:String}" : ""}`;

export const metricColumns = RUN_METRIC_NAMES.map((m) => `${RUN_METRICS[m]} AS ${m}`).join(",\n       ");
/** `(metric, value)` pairs of the run metrics, for an ARRAY JOIN that turns one row of metricColumns into a row per metric. */
export const metricPairs = RUN_METRIC_NAMES.map((m) => `('${m}', ${m})`).join(", ");

/**
 * Rolls up the hours in [from, to) (whole UTC hours) of a project: one row per agent, metric and hour with runs.
 * Rolling an hour again (runs that ended late) writes newer rows that replace the earlier ones.
 */
export async function rollUpHours(ch: ClickHouse, q: { readonly projectId: number; readonly from: Date; readonly to: Date }): Promise<void> {
  await ch.exec(
    `INSERT INTO agent_metric_hours (project_id, agent_name, metric, hour, runs, value, rolled_at)
     SELECT {pid:UInt64}, agent_name, m.1, hour, runs, m.2, now64(3)
       FROM (SELECT agent_name, toStartOfHour(${RUN_ENDED_AT}) AS hour, count() AS runs,
                    ${metricColumns}
               ${endedRuns(undefined)}
              GROUP BY agent_name, hour)
      ARRAY JOIN [${metricPairs}] AS m`,
    { pid: q.projectId, from: chTime(q.from), to: chTime(q.to), ...NOT_JUDGE_PARAMS },
  );
}

/** The latest hour rolled up for a project (its start), or undefined before the first roll-up. */
export async function latestRolledHour(ch: ClickHouse, projectId: number): Promise<Date | undefined> {
  const [row] = await ch.query<{ latest: string | number; n: string | number }>(
    `SELECT toUnixTimestamp(max(hour)) AS latest, count() AS n FROM agent_metric_hours WHERE project_id = {pid:UInt64}`,
    { pid: projectId },
  );
  return row && Number(row.n) > 0 ? new Date(Number(row.latest) * 1000) : undefined;
}

export interface MetricHour {
  readonly agent_name: string;
  readonly metric: string;
  /** The hour's start. */
  readonly hour: Date;
  readonly runs: number;
  readonly value: number;
}

/** Writes hourly rows as they are (history imported or seeded; the roll-up writes its own). */
export async function insertMetricHours(ch: ClickHouse, projectId: number, rows: readonly MetricHour[]): Promise<void> {
  if (rows.length === 0) return;
  const rolledAt = chTime(new Date());
  await ch.insert("agent_metric_hours", rows.map((r) => ({
    project_id: projectId, agent_name: r.agent_name, metric: r.metric, hour: chHour(r.hour), runs: r.runs, value: r.value, rolled_at: rolledAt,
  })));
}

/** An agent's hourly history of one metric: in its hour-of-week slot, and over all hours. */
export interface BaselineStats {
  readonly agent_name: string;
  /** Hours of this hour of the week with enough runs, their median and median absolute deviation. */
  readonly slot: { readonly n: number; readonly median: number; readonly mad: number };
  /** The same over every hour with enough runs. */
  readonly all: { readonly n: number; readonly median: number; readonly mad: number };
  /** The median volume (runs, tool calls, scores) of those hours: what one hour's value was computed from. */
  readonly hour_volume: number;
}

/**
 * The baseline statistics of a metric per agent (one agent, or each of the project's) over the hours in
 * [since, until) with at least `minRuns` runs. `hourOfWeek` is 0 for Monday 00:00 UTC … 167 for Sunday 23:00.
 * The medians are quantileExact's (the upper one of an even count).
 */
export async function baselineStats(
  ch: ClickHouse,
  q: { readonly projectId: number; readonly metric: string; readonly agent?: string; readonly hourOfWeek: number; readonly since: Date; readonly until: Date; readonly minRuns: number },
): Promise<BaselineStats[]> {
  const rows = await ch.query<Record<string, string | number>>(
    `SELECT agent_name, ${STATS_COLUMNS}
       FROM (SELECT agent_name, value, runs, ${IN_SLOT}
               FROM agent_metric_hours FINAL
              WHERE project_id = {pid:UInt64} AND metric = {metric:String}
                AND hour >= {since:DateTime('UTC')} AND hour < {until:DateTime('UTC')} AND runs >= {min_runs:UInt32}
                ${q.agent ? "AND agent_name = {agent:String}" : `AND ${NOT_JUDGE}`})
      GROUP BY agent_name`,
    {
      pid: q.projectId, metric: q.metric, how: q.hourOfWeek, since: chHour(q.since), until: chHour(q.until), min_runs: q.minRuns,
      ...(q.agent ? { agent: q.agent } : NOT_JUDGE_PARAMS),
    },
  );
  return rows.map(statsOfRow);
}

/** The statistics' columns over rows of (value, runs, in_slot): what baselineStats and dimensionStats select per group. */
export const STATS_COLUMNS = `countIf(in_slot) AS slot_n,
            quantileExactIf(0.5)(value, in_slot) AS slot_median,
            arrayReduce('quantileExact(0.5)', arrayMap(x -> abs(x - slot_median), groupArrayIf(value, in_slot))) AS slot_mad,
            count() AS all_n,
            quantileExact(0.5)(value) AS all_median,
            arrayReduce('quantileExact(0.5)', arrayMap(x -> abs(x - all_median), groupArray(value))) AS all_mad,
            quantileExact(0.5)(runs) AS hour_volume`;
/** Whether an hour is in the hour-of-week slot {how:UInt8}. */
export const IN_SLOT = "(toDayOfWeek(hour) - 1) * 24 + toHour(hour) = {how:UInt8} AS in_slot";

export function statsOfRow(r: Record<string, string | number>): BaselineStats {
  const num = (v: string | number | undefined): number => (v === undefined || v === null ? NaN : Number(v));
  const slotN = Number(r.slot_n);
  return {
    agent_name: String(r.agent_name),
    slot: { n: slotN, median: slotN > 0 ? num(r.slot_median) : NaN, mad: slotN > 0 ? num(r.slot_mad) : NaN },
    all: { n: Number(r.all_n), median: num(r.all_median), mad: num(r.all_mad) },
    hour_volume: num(r.hour_volume),
  };
}

/** The run metrics of each agent over the runs that ended in [from, to), and how many runs. */
export interface WindowMetrics {
  readonly agent_name: string;
  readonly runs: number;
  readonly values: Readonly<Record<RunMetric, number>>;
}

/** `environment`: only the runs of that environment. */
export async function windowMetrics(
  ch: ClickHouse,
  q: { readonly projectId: number; readonly agent?: string; readonly environment?: string; readonly from: Date; readonly to: Date },
): Promise<WindowMetrics[]> {
  const rows = await ch.query<Record<string, string | number>>(
    `SELECT agent_name, count() AS runs, ${metricColumns} ${endedRuns(q.agent, { environment: q.environment })} GROUP BY agent_name`,
    {
      pid: q.projectId, from: chTime(q.from), to: chTime(q.to), ...NOT_JUDGE_PARAMS, ...(q.agent ? { agent: q.agent } : {}),
      ...(q.environment !== undefined ? { environment: q.environment } : {}),
    },
  );
  return rows.map((r) => ({
    agent_name: String(r.agent_name),
    runs: Number(r.runs),
    values: Object.fromEntries(RUN_METRIC_NAMES.map((m) => [m, Number(r[m])])) as Record<RunMetric, number>,
  }));
}

/**
 * The hourly aggregates of learned baselines split by one dimension of the runs (ClickHouse
 * agent_metric_hours_by_dimension, migration 271), the same SQL on chDB and a server: per agent, metric and hour, one
 * row per environment the runs named and one per config version they ran with. The metrics and their SQL are those of
 * the agent-wide rows (metric-hours.ts for the run metrics, event-metrics.ts for the tool error rate and score means);
 * a run is counted once under its environment and once under its config version, so each roll-up is one
 * INSERT … SELECT whose ARRAY JOIN gives every run (or tool call, or score) both dimensions before grouping.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { NOT_JUDGE_PARAMS } from "../../core/events/judge-runs.js";
import { RUN_ENDED_AT, toChTime } from "../runs/run-query.js";
import { IN_SLOT, STATS_COLUMNS, chHour, endedRuns, metricColumns, metricPairs, statsOfRow, type BaselineStats } from "./metric-hours.js";
import { SCORE_PREFIX, TOOL_ERROR_RATE, scoreRows, toolCallRows } from "./event-metrics.js";

export const DIMENSIONS = ["environment", "config_version"] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** A run's value of each dimension ('' when it named none), for an ARRAY JOIN over rows with both columns. */
const DIMENSION_PAIRS =
  "[('environment', CAST(environment AS String)), ('config_version', if(isNull(config_version), '', toString(assumeNotNull(config_version))))]";

const COLUMNS = "project_id, agent_name, dimension, dimension_value, metric, hour, runs, value, rolled_at";

/**
 * Rolls up the hours in [from, to) (whole UTC hours) of a project per dimension: the run metrics, the tool error rate
 * and every score's mean. Rolling an hour again writes newer rows that replace the earlier ones.
 */
export async function rollUpDimensionHours(ch: ClickHouse, q: { readonly projectId: number; readonly from: Date; readonly to: Date }): Promise<void> {
  const params = { pid: q.projectId, from: toChTime(q.from.toISOString()), to: toChTime(q.to.toISOString()), ...NOT_JUDGE_PARAMS };
  await ch.exec(
    `INSERT INTO agent_metric_hours_by_dimension (${COLUMNS})
     SELECT {pid:UInt64}, agent_name, dimension, dimension_value, m.1, hour, runs, m.2, now64(3)
       FROM (SELECT agent_name, d.1 AS dimension, d.2 AS dimension_value, toStartOfHour(${RUN_ENDED_AT}) AS hour, count() AS runs,
                    ${metricColumns}
               ${endedRuns(undefined, { arrayJoin: `ARRAY JOIN ${DIMENSION_PAIRS} AS d` })}
              GROUP BY agent_name, dimension, dimension_value, hour)
      ARRAY JOIN [${metricPairs}] AS m`,
    params,
  );
  await ch.exec(
    `INSERT INTO agent_metric_hours_by_dimension (${COLUMNS})
     SELECT {pid:UInt64}, agent_name, d.1 AS dimension, d.2 AS dimension_value, '${TOOL_ERROR_RATE}', hour, sum(calls), sum(failed) / sum(calls), now64(3)
       FROM (${toolCallRows({})}) ARRAY JOIN ${DIMENSION_PAIRS} AS d
      GROUP BY agent_name, dimension, dimension_value, hour`,
    params,
  );
  await ch.exec(
    `INSERT INTO agent_metric_hours_by_dimension (${COLUMNS})
     SELECT {pid:UInt64}, agent_name, d.1 AS dimension, d.2 AS dimension_value, concat('${SCORE_PREFIX}', name), hour, sum(n), sum(total) / sum(n), now64(3)
       FROM (${scoreRows({}, undefined)}) ARRAY JOIN ${DIMENSION_PAIRS} AS d
      GROUP BY agent_name, dimension, dimension_value, name, hour`,
    params,
  );
}

/** The latest hour rolled up per dimension for a project (its start), or undefined before the first such roll-up. */
export async function latestDimensionHour(ch: ClickHouse, projectId: number): Promise<Date | undefined> {
  const [row] = await ch.query<{ latest: string | number; n: string | number }>(
    `SELECT toUnixTimestamp(max(hour)) AS latest, count() AS n FROM agent_metric_hours_by_dimension WHERE project_id = {pid:UInt64}`,
    { pid: projectId },
  );
  return row && Number(row.n) > 0 ? new Date(Number(row.latest) * 1000) : undefined;
}

export interface DimensionHour {
  readonly agent_name: string;
  readonly dimension: Dimension;
  readonly dimension_value: string;
  readonly metric: string;
  readonly hour: Date;
  readonly runs: number;
  readonly value: number;
}

/** Writes hourly rows as they are (history imported or seeded; the roll-up writes its own). */
export async function insertDimensionHours(ch: ClickHouse, projectId: number, rows: readonly DimensionHour[]): Promise<void> {
  if (rows.length === 0) return;
  const rolledAt = toChTime(new Date().toISOString());
  await ch.insert("agent_metric_hours_by_dimension", rows.map((r) => ({
    project_id: projectId, agent_name: r.agent_name, dimension: r.dimension, dimension_value: r.dimension_value, metric: r.metric,
    hour: chHour(r.hour), runs: r.runs, value: r.value, rolled_at: rolledAt,
  })));
}

/** An agent's statistics of one metric for one value of a dimension, and the latest hour it has (ISO). */
export interface DimensionStats extends BaselineStats {
  readonly dimension_value: string;
  readonly latest_hour: string;
}

/**
 * The baseline statistics (as baselineStats) of a metric per agent (or for one) and value of a dimension (or one
 * value), over the hours in [since, until) with at least `minRuns` runs; runs that named no value ('') are left out.
 * Newest first (by the latest hour), at most `limit` rows.
 */
export async function dimensionStats(
  ch: ClickHouse,
  q: {
    readonly projectId: number; readonly agent?: string; readonly metric: string; readonly dimension: Dimension; readonly value?: string;
    readonly hourOfWeek: number; readonly since: Date; readonly until: Date; readonly minRuns: number; readonly limit?: number;
  },
): Promise<DimensionStats[]> {
  const rows = await ch.query<Record<string, string | number>>(
    `SELECT agent_name, dimension_value, toUnixTimestamp(max(hour)) AS latest, ${STATS_COLUMNS}
       FROM (SELECT agent_name, dimension_value, hour, value, runs, ${IN_SLOT}
               FROM agent_metric_hours_by_dimension FINAL
              WHERE project_id = {pid:UInt64} AND metric = {metric:String} AND dimension = {dimension:String}
                ${q.agent !== undefined ? "AND agent_name = {agent:String}" : ""}
                AND hour >= {since:DateTime('UTC')} AND hour < {until:DateTime('UTC')} AND runs >= {min_runs:UInt32}
                AND ${q.value !== undefined ? "dimension_value = {value:String}" : "dimension_value != ''"})
      GROUP BY agent_name, dimension_value
      ORDER BY latest DESC, toUInt64OrZero(dimension_value) DESC, dimension_value DESC
      LIMIT {limit:UInt32}`,
    {
      pid: q.projectId, metric: q.metric, dimension: q.dimension, how: q.hourOfWeek, ...(q.agent !== undefined ? { agent: q.agent } : {}),
      since: chHour(q.since), until: chHour(q.until), min_runs: q.minRuns, limit: q.limit ?? 100, ...(q.value !== undefined ? { value: q.value } : {}),
    },
  );
  return rows.map((r) => ({ ...statsOfRow(r), dimension_value: String(r.dimension_value), latest_hour: new Date(Number(r.latest) * 1000).toISOString() }));
}

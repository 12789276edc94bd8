/**
 * The baseline metrics that are not a run's own columns, rolled up into the same hourly table (agent_metric_hours)
 * and read over a live window with the same SQL on chDB and a server:
 *
 *   tool_error_rate   failed tool calls / tool calls: tool_call events with phase "end" (agent_events), failed as
 *                     alerts/triggers/tool-error.ts judges one (a non-empty `error`, or `status: "error"`);
 *                     the hour is the call's end (occurred_at), the volume the number of calls.
 *   score_mean:<name> the mean of a score's numeric and boolean values (scores), per score name; the hour is the
 *                     score's creation, the volume the number of scores.
 *
 * Both are attributed to the agent of the run they belong to, production runs only (not the LLM judge's own runs,
 * not experiments'), as the run metrics are (metric-hours.ts). An hour's `runs` column holds the volume.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { NOT_JUDGE, NOT_JUDGE_PARAMS } from "../../core/events/judge-runs.js";
import { toChTime } from "../runs/run-query.js";

export const TOOL_ERROR_RATE = "tool_error_rate";
export const SCORE_PREFIX = "score_mean:";
/** The key of a score's mean in agent_metric_hours.metric. */
export const scoreMetricKey = (scoreName: string): string => `${SCORE_PREFIX}${scoreName}`;

/** What one window or hour of an event metric is, for one agent: its volume and its value. */
export interface VolumeValue {
  readonly agent_name: string;
  readonly runs: number;
  readonly value: number;
}

export type EventMetric = { readonly kind: "tool_error_rate" } | { readonly kind: "score_mean"; readonly score: string };

const chTime = (d: Date): string => toChTime(d.toISOString());

/** A tool call's end that failed: the SQL twin of toolFailure() in alerts/triggers/tool-error.ts. */
const TOOL_FAILED = `((JSONType(payload, 'error') = 'String' AND trimBoth(JSONExtractString(payload, 'error')) != '')
   OR JSONType(payload, 'error') IN ('Object', 'Array')
   OR lower(JSONExtractString(payload, 'status')) = 'error')`;

/**
 * The production runs' agents: a run with an event or score in [from, to) was last active at or after `from`,
 * which bounds the read of agent_runs (its minmax index on last_event_at).
 */
const runAgents = (agent: string | undefined, environment: string | undefined) =>
  `(SELECT run_id, agent_name, environment, config_version FROM agent_runs FINAL
     WHERE project_id = {pid:UInt64} AND experiment_id = '' AND ${NOT_JUDGE} AND last_event_at >= {from:DateTime64(3, 'UTC')}
       ${agent ? "AND agent_name = {agent:String}" : ""}
       ${environment !== undefined ? "AND environment = {environment:String}" : ""})`;

/** Which runs an event metric counts: one agent's (or every agent's), one environment's (or every one's). */
export interface RunFilter {
  readonly agent?: string;
  readonly environment?: string;
}

/**
 * Per run and hour: tool calls and failed ones, with the run's agent, environment and config version. The bound on
 * received_at (the partition key) keeps a roll-up from reading older months: an event is received after it happened,
 * give or take an hour of client clock skew.
 */
export const toolCallRows = (f: RunFilter) =>
  `SELECT r.agent_name AS agent_name, r.environment AS environment, r.config_version AS config_version, e.hour AS hour, e.calls AS calls, e.failed AS failed
     FROM (SELECT run_id, toStartOfHour(occurred_at) AS hour, uniqExact(event_id) AS calls, uniqExactIf(event_id, ${TOOL_FAILED}) AS failed
             FROM agent_events
            WHERE project_id = {pid:UInt64} AND event_type = 'tool_call' AND JSONExtractString(payload, 'phase') = 'end'
              AND received_at >= {from:DateTime64(3, 'UTC')} - INTERVAL 1 HOUR
              AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')}
            GROUP BY run_id, hour) AS e
    INNER JOIN ${runAgents(f.agent, f.environment)} AS r ON e.run_id = r.run_id`;

/** Per agent and hour (or over the whole range when `hourly` is false): tool calls and the failed share. */
const toolCalls = (f: RunFilter, hourly: boolean) =>
  `SELECT agent_name, ${hourly ? "hour" : "toDateTime(0) AS hour"}, sum(calls) AS runs, sum(failed) / sum(calls) AS value
     FROM (${toolCallRows(f)})
    GROUP BY agent_name, hour`;

/** Per run, score name and hour: how many scores and their sum, with the run's agent, environment and config version. */
export const scoreRows = (f: RunFilter, name: string | undefined) =>
  `SELECT r.agent_name AS agent_name, r.environment AS environment, r.config_version AS config_version, s.name AS name, s.hour AS hour, s.n AS n, s.total AS total
     FROM (SELECT run_id, name, toStartOfHour(created_at) AS hour, count() AS n, sum(value_number) AS total
             FROM scores FINAL
            WHERE project_id = {pid:UInt64} AND value_type IN ('number', 'boolean')
              AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
              ${name !== undefined ? "AND name = {name:String}" : ""}
            GROUP BY run_id, name, hour) AS s
    INNER JOIN ${runAgents(f.agent, f.environment)} AS r ON s.run_id = r.run_id`;

/** Per agent, score name and hour (or over the whole range): how many scores and their mean. */
const scoreMeans = (f: RunFilter, name: string | undefined, hourly: boolean) =>
  `SELECT agent_name, name, ${hourly ? "hour" : "toDateTime(0) AS hour"}, sum(n) AS runs, sum(total) / sum(n) AS value
     FROM (${scoreRows(f, name)})
    GROUP BY agent_name, name, hour`;

/**
 * Rolls up the tool error rate and every score's mean of the hours in [from, to) (whole UTC hours) of a project;
 * like rollUpHours, rolling an hour again writes newer rows that replace the earlier ones.
 */
export async function rollUpEventHours(ch: ClickHouse, q: { readonly projectId: number; readonly from: Date; readonly to: Date }): Promise<void> {
  const params = { pid: q.projectId, from: chTime(q.from), to: chTime(q.to), ...NOT_JUDGE_PARAMS };
  await ch.exec(
    `INSERT INTO agent_metric_hours (project_id, agent_name, metric, hour, runs, value, rolled_at)
     SELECT {pid:UInt64}, agent_name, '${TOOL_ERROR_RATE}', hour, runs, value, now64(3) FROM (${toolCalls({}, true)})`,
    params,
  );
  await ch.exec(
    `INSERT INTO agent_metric_hours (project_id, agent_name, metric, hour, runs, value, rolled_at)
     SELECT {pid:UInt64}, agent_name, concat('${SCORE_PREFIX}', name), hour, runs, value, now64(3) FROM (${scoreMeans({}, undefined, true)})`,
    params,
  );
}

/** An event metric of each agent (or one; of one environment's runs) over [from, to), with its volume (tool calls, scores). */
export async function windowEventMetric(
  ch: ClickHouse,
  q: { readonly projectId: number; readonly agent?: string; readonly environment?: string; readonly metric: EventMetric; readonly from: Date; readonly to: Date },
): Promise<VolumeValue[]> {
  const f = { agent: q.agent, environment: q.environment };
  const sql = q.metric.kind === "tool_error_rate" ? toolCalls(f, false) : scoreMeans(f, q.metric.score, false);
  const rows = await ch.query<{ agent_name: string; runs: string | number; value: string | number }>(
    `SELECT agent_name, runs, value FROM (${sql})`,
    {
      pid: q.projectId, from: chTime(q.from), to: chTime(q.to), ...NOT_JUDGE_PARAMS,
      ...(q.agent ? { agent: q.agent } : {}), ...(q.environment !== undefined ? { environment: q.environment } : {}), ...(q.metric.kind === "score_mean" ? { name: q.metric.score } : {}),
    },
  );
  return rows.map((r) => ({ agent_name: String(r.agent_name), runs: Number(r.runs), value: Number(r.value) }));
}

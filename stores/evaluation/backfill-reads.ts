/**
 * What a backfill reads in ClickHouse (evaluation/jobs/backfill.ts): the runs that ended in a time range and pass a
 * rule's run fields, and the end events of spans of such runs. The judge's own runs are never taken.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { JUDGE_AGENT } from "../../core/events/judge-runs.js";
import { toChTime } from "../runs/event-store.js";
import type { RuleFilter } from "./shapes.js";

export interface BackfillRange { readonly from: string; readonly to: string }
export interface BackfillTarget { readonly sdk_run_id: string; readonly run_id: string; readonly span_id: string }
/** A span event as read: its payload's JSON (the cut span payload where there is one). */
export interface SpanEventRow { readonly sdk_run_id: string; readonly run_id: string; readonly span_id: string; readonly event_type: string; readonly p: string }

/** The ClickHouse conditions (on agent_runs) of a filter's run fields, and their parameters. */
function runConditions(f: RuleFilter): { cond: string; params: Record<string, unknown> } {
  const cond = [
    "agent_name != {judge:String}",
    ...(f.agent_name !== undefined ? ["agent_name = {agent:String}"] : []),
    ...(f.config_version !== undefined ? ["config_version = {version:UInt32}"] : []),
    ...(f.status !== undefined ? ["status = {status:String}"] : []),
    ...(f.session_id !== undefined ? ["session_id = {session:String}"] : []),
    ...(f.experiment_id !== undefined ? ["experiment_id = {experiment:String}"] : []),
    ...(f.has_error !== undefined ? [f.has_error ? "(error_count > 0 OR status = 'error')" : "(error_count = 0 AND status != 'error')"] : []),
  ];
  const params = {
    judge: JUDGE_AGENT,
    ...(f.agent_name !== undefined ? { agent: f.agent_name } : {}), ...(f.config_version !== undefined ? { version: f.config_version } : {}),
    ...(f.status !== undefined ? { status: f.status } : {}), ...(f.session_id !== undefined ? { session: f.session_id } : {}),
    ...(f.experiment_id !== undefined ? { experiment: f.experiment_id } : {}),
  };
  return { cond: cond.join(" AND "), params };
}

/** The ended runs of the range that pass the rule's run filter. */
export async function endedRuns(ch: ClickHouse, projectId: number, filter: RuleFilter, range: BackfillRange, max: number): Promise<BackfillTarget[]> {
  const { cond, params } = runConditions(filter);
  const rows = await ch.query<{ external_id: string; run_id: string }>(
    `SELECT external_id, toString(run_id) AS run_id FROM agent_runs FINAL
      WHERE project_id = {pid:UInt64} AND status IN ('success', 'error') AND ended_at >= {from:DateTime64(3, 'UTC')} AND ended_at < {to:DateTime64(3, 'UTC')} AND ${cond}
      ORDER BY ended_at LIMIT {max:UInt32}`,
    { pid: projectId, from: toChTime(range.from), to: toChTime(range.to), max, ...params },
  );
  return rows.map((r) => ({ sdk_run_id: r.external_id, run_id: r.run_id, span_id: "" }));
}

/** The step and tool-call events of the range, of runs that pass `filter`'s run fields, oldest first. */
export async function endedSpanEvents(ch: ClickHouse, projectId: number, filter: RuleFilter, range: BackfillRange, max: number): Promise<SpanEventRow[]> {
  const { cond, params } = runConditions(filter);
  return ch.query<SpanEventRow>(
    `SELECT sdk_run_id, toString(run_id) AS run_id, span_id, event_type, if(span_payload = '', payload, span_payload) AS p FROM agent_events
      WHERE project_id = {pid:UInt64} AND event_type IN ('step', 'tool_call') AND span_id != ''
        AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')}
        AND run_id IN (SELECT run_id FROM agent_runs FINAL WHERE project_id = {pid:UInt64} AND ${cond})
      ORDER BY occurred_at LIMIT {max:UInt32}`,
    { pid: projectId, from: toChTime(range.from), to: toChTime(range.to), max, ...params },
  );
}

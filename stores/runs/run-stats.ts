/**
 * Aggregates over agent_runs for the dashboard and agents pages (ClickHouse SQL, shared by chDB and a
 * server). Each query reads one project's rows (the project_id minmax index skips the others'), and FINAL folds run
 * versions so each run counts once. They count the project's production runs, as the runs list shows them: the LLM
 * judge's own runs (core/events/judge-runs.ts; /costs shows their spend as evaluation spend) and the runs of
 * experiments (the datasets' pages show those) are left out.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { RunStatus } from "../../core/events/schema.js";
import { RUN_STATUSES } from "../../core/events/schema.js";
import { NOT_JUDGE, NOT_JUDGE_PARAMS } from "../../core/events/judge-runs.js";

/** The runs these aggregates count (see above). */
const PRODUCTION = `${NOT_JUDGE} AND experiment_id = ''`;

export type StatusCounts = Record<RunStatus, number> & { total: number };

export async function statusCounts(ch: ClickHouse, projectId: number): Promise<StatusCounts> {
  const rows = await ch.query<{ status: string; n: string | number }>(
    `SELECT status, count() AS n FROM agent_runs FINAL WHERE project_id = {pid:UInt64} AND ${PRODUCTION} GROUP BY status`,
    { pid: projectId, ...NOT_JUDGE_PARAMS },
  );
  const out = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as StatusCounts;
  out.total = 0;
  for (const r of rows) {
    if ((RUN_STATUSES as readonly string[]).includes(r.status)) out[r.status as RunStatus] = Number(r.n);
    out.total += Number(r.n);
  }
  return out;
}

/** Agent names for the filter menu. No FINAL: a run's agent name is set once, so any version has it. */
export async function agentNames(ch: ClickHouse, projectId: number, limit = 500): Promise<string[]> {
  const rows = await ch.query<{ agent_name: string }>(
    `SELECT DISTINCT agent_name FROM agent_runs WHERE project_id = {pid:UInt64} AND agent_name != '' AND ${NOT_JUDGE} ORDER BY agent_name LIMIT {limit:UInt32}`,
    { pid: projectId, limit, ...NOT_JUDGE_PARAMS },
  );
  return rows.map((r) => String(r.agent_name));
}

export interface AgentRunStats {
  agent_name: string;
  runs: number;
  running: number;
  errors: number;
  cost_usd: number;
  total_tokens: number;
  last_run_at: string | null;
  config_versions: number;
}

/** Per-agent run statistics, busiest agents first (bounded by `limit`). */
export async function agentRunStats(ch: ClickHouse, projectId: number, limit = 500): Promise<AgentRunStats[]> {
  const rows = await ch.query<Record<string, string | number | null>>(
    `SELECT agent_name,
            count() AS runs,
            countIf(status IN ('running', 'waiting_for_input')) AS running,
            countIf(status = 'error') AS errors,
            sum(cost_usd) AS cost_usd,
            sum(total_tokens) AS total_tokens,
            max(coalesce(started_at, last_event_at)) AS last_run_at,
            uniqExact(config_version) AS config_versions
       FROM agent_runs FINAL
      WHERE project_id = {pid:UInt64} AND ${PRODUCTION}
      GROUP BY agent_name
      ORDER BY runs DESC, agent_name
      LIMIT {limit:UInt32}`,
    { pid: projectId, limit, ...NOT_JUDGE_PARAMS },
  );
  return rows.map((r) => ({
    agent_name: String(r.agent_name),
    runs: Number(r.runs),
    running: Number(r.running),
    errors: Number(r.errors),
    cost_usd: Number(r.cost_usd),
    total_tokens: Number(r.total_tokens),
    last_run_at: r.last_run_at ? toIso(String(r.last_run_at)) : null,
    config_versions: Number(r.config_versions),
  }));
}

/** ClickHouse returns "2026-11-23 10:00:00.000" (UTC column); make it ISO. */
const toIso = (s: string): string => (s.includes("T") ? s : `${s.replace(" ", "T")}Z`);

/**
 * What the built-in alert triggers read to judge a rule (alerts/triggers/): aggregates over ClickHouse agent_runs
 * and scores, agents' budgets and evaluation jobs in Postgres. Figures only; whether they fire is the trigger's call.
 * `agent` "" means every agent but the LLM judge's own runs (core/events/judge-runs.ts), as the triggers watch them.
 */
import { NOT_JUDGE, NOT_JUDGE_PARAMS } from "../../core/events/judge-runs.js";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { Sql } from "../../core/ports/sql.js";
import { toChTime } from "../runs/run-query.js";

const chTime = (d: Date): string => toChTime(d.toISOString());

/** error_rate_above: a project's runs that ended (success or error) since `since`, and how many of them in error. */
export async function endedRunCounts(
  ch: ClickHouse,
  q: { readonly projectId: number; readonly since: Date; readonly agent: string },
): Promise<{ errors: number; runs: number }> {
  const agent = q.agent;
  const [row] = await ch.query<{ errors: string | number; runs: string | number }>(
    `SELECT countIf(status = 'error') AS errors, count() AS runs
     FROM agent_runs FINAL
     WHERE project_id = {pid:UInt64} AND status IN ('success', 'error')
       AND ifNull(ended_at, status_at) >= {since:DateTime64(3, 'UTC')}
       ${agent ? "AND agent_name = {agent:String}" : `AND ${NOT_JUDGE}`}`,
    { pid: q.projectId, since: chTime(q.since), ...(agent ? { agent } : NOT_JUDGE_PARAMS) },
  );
  return { errors: Number(row?.errors ?? 0), runs: Number(row?.runs ?? 0) };
}

/**
 * score_below: the average of a project's numeric and boolean (1/0) scores of this name given since `since`, and
 * their count (average NaN when there are none); with `agent`, only scores of that agent's runs.
 */
export async function scoreAverageSince(
  ch: ClickHouse,
  q: { readonly projectId: number; readonly scoreName: string; readonly since: Date; readonly agent: string },
): Promise<{ average: number; count: number }> {
  const agent = q.agent;
  // The run's agent from its latest row; only when the rule names one.
  const byAgent = agent
    ? `AND run_id IN (SELECT run_id FROM agent_runs FINAL WHERE project_id = {pid:UInt64} AND agent_name = {agent:String})`
    : "";
  const [row] = await ch.query<{ average: number | string | null; n: number | string }>(
    `SELECT avg(value_number) AS average, count() AS n
     FROM scores FINAL
     WHERE project_id = {pid:UInt64} AND name = {name:String} AND value_type IN ('number', 'boolean')
       AND created_at >= {since:DateTime64(3, 'UTC')} ${byAgent}`,
    { pid: q.projectId, name: q.scoreName, since: chTime(q.since), ...(agent ? { agent } : {}) },
  );
  const count = Number(row?.n ?? 0);
  return { average: count > 0 ? Number(row!.average) : NaN, count };
}

/**
 * run_duration_above: the projects' runs still running that started between `startedAfter` and `startedBefore`,
 * oldest first, at most `limit` (a whole number).
 */
export async function runningRunsStartedBetween(
  ch: ClickHouse,
  q: { readonly projectIds: readonly number[]; readonly startedAfter: Date; readonly startedBefore: Date; readonly limit: number },
): Promise<{ project_id: number; external_id: string }[]> {
  if (!Number.isSafeInteger(q.limit) || q.limit < 1) throw new RangeError(`limit must be a positive whole number, got ${q.limit}`);
  const rows = await ch.query<{ project_id: string | number; external_id: string; started: string }>(
    `SELECT project_id, external_id, toString(ifNull(started_at, status_at)) AS started
       FROM agent_runs FINAL
       WHERE project_id IN {projects:Array(UInt64)} AND status = 'running'
         AND ifNull(started_at, status_at) <= {cutoff:DateTime64(3, 'UTC')}
         AND ifNull(started_at, status_at) >= {floor:DateTime64(3, 'UTC')}
       ORDER BY started LIMIT ${q.limit}`,
    { projects: q.projectIds, cutoff: chTime(q.startedBefore), floor: chTime(q.startedAfter) },
  );
  return rows.map((r) => ({ project_id: Number(r.project_id), external_id: r.external_id }));
}

/** agent_budget_exceeded: what each of these agents of a project spent on the costed runs that ended since `since`. */
export async function agentSpendSince(
  ch: ClickHouse,
  q: { readonly projectId: number; readonly agents: readonly string[]; readonly since: Date },
): Promise<{ agent_name: string; spend: number }[]> {
  const rows = await ch.query<{ agent_name: string; spend: number | string }>(
    `SELECT agent_name, sum(cost_usd) AS spend FROM agent_runs FINAL
       WHERE project_id = {pid:UInt64} AND agent_name IN {agents:Array(String)} AND cost_usd > 0
         AND ifNull(ended_at, last_event_at) >= {since:DateTime64(3, 'UTC')}
       GROUP BY agent_name`,
    { pid: q.projectId, agents: q.agents, since: chTime(q.since) },
  );
  return rows.map((r) => ({ agent_name: r.agent_name, spend: Number(r.spend) }));
}

/** agent_budget_exceeded: the budgets (null: none) of these registered agents; an agent not registered is left out. */
export async function agentBudgets(
  sql: Sql,
  agents: readonly { readonly project_id: number; readonly agent: string }[],
): Promise<{ project_id: number; name: string; budget_usd: number | null }[]> {
  const rows = await sql.query<{ project_id: number; name: string; budget_usd: string | number | null }>(
    `SELECT a.project_id, a.name, a.budget_usd FROM agents a
       JOIN unnest($1::bigint[], $2::text[]) AS p(project_id, name) ON a.project_id = p.project_id AND a.name = p.name`,
    [agents.map((p) => p.project_id), agents.map((p) => p.agent)],
  );
  return rows.map((r) => ({ project_id: Number(r.project_id), name: r.name, budget_usd: r.budget_usd === null ? null : Number(r.budget_usd) }));
}

/** agent_budget_exceeded's sweep: every agent with a budget in these projects. */
export async function budgetedAgents(sql: Sql, projectIds: readonly number[]): Promise<{ project_id: number; name: string }[]> {
  const rows = await sql.query<{ project_id: number; name: string }>(
    `SELECT project_id, name FROM agents WHERE budget_usd IS NOT NULL AND project_id = ANY($1::bigint[])`,
    [projectIds],
  );
  return rows.map((r) => ({ project_id: Number(r.project_id), name: r.name }));
}

/**
 * evaluation_failure_rate_above: a project's evaluation jobs that finished since `since` (done or failed), and how
 * many failed; with `evaluatorName`, only that evaluator's.
 */
export async function finishedEvaluationJobs(
  sql: Sql,
  q: { readonly projectId: number; readonly since: Date; readonly evaluatorName?: string },
): Promise<{ failed: number; finished: number }> {
  const [row] = await sql.query<{ failed: string | number; finished: string | number }>(
    `SELECT count(*) FILTER (WHERE j.status = 'failed') AS failed, count(*) AS finished
       FROM evaluation_jobs j ${q.evaluatorName ? "JOIN evaluators e ON e.id = j.evaluator_id AND e.name = $3" : ""}
      WHERE j.project_id = $1 AND j.status IN ('done', 'failed') AND j.finished_at >= $2`,
    [q.projectId, q.since.toISOString(), ...(q.evaluatorName ? [q.evaluatorName] : [])],
  );
  return { failed: Number(row?.failed ?? 0), finished: Number(row?.finished ?? 0) };
}

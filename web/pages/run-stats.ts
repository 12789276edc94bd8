/**
 * Aggregates over agent_runs for the dashboard, agents and costs pages (ClickHouse SQL, shared by chDB and a
 * server). Each query reads one user's slice of the (user_id, external_id) primary key, and FINAL folds run
 * versions so each run counts once. Candidates for core/clickhouse/ once another component needs them.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { RunStatus } from "../../core/events/schema.js";
import { RUN_STATUSES } from "../../core/events/schema.js";

export type StatusCounts = Record<RunStatus, number> & { total: number };

export async function statusCounts(ch: ClickHouse, userId: number): Promise<StatusCounts> {
  const rows = await ch.query<{ status: string; n: string | number }>(
    `SELECT status, count() AS n FROM agent_runs FINAL WHERE user_id = {uid:UInt64} GROUP BY status`,
    { uid: userId },
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
export async function agentNames(ch: ClickHouse, userId: number, limit = 500): Promise<string[]> {
  const rows = await ch.query<{ agent_name: string }>(
    `SELECT DISTINCT agent_name FROM agent_runs WHERE user_id = {uid:UInt64} AND agent_name != '' ORDER BY agent_name LIMIT {limit:UInt32}`,
    { uid: userId, limit },
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
export async function agentRunStats(ch: ClickHouse, userId: number, limit = 500): Promise<AgentRunStats[]> {
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
      WHERE user_id = {uid:UInt64}
      GROUP BY agent_name
      ORDER BY runs DESC, agent_name
      LIMIT {limit:UInt32}`,
    { uid: userId, limit },
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

export interface DailyCost { day: string; cost_usd: number; runs: number; total_tokens: number }

/** Cost per UTC day over the last `days` days, with zero-cost days filled in so the chart has no gaps. */
export async function costPerDay(ch: ClickHouse, userId: number, days: number, now = new Date()): Promise<DailyCost[]> {
  const rows = await ch.query<Record<string, string | number>>(
    `SELECT toString(toDate(coalesce(started_at, last_event_at))) AS day,
            sum(cost_usd) AS cost_usd, count() AS runs, sum(total_tokens) AS total_tokens
       FROM agent_runs FINAL
      WHERE user_id = {uid:UInt64} AND coalesce(started_at, last_event_at) >= {from:DateTime64(3, 'UTC')}
      GROUP BY day ORDER BY day`,
    { uid: userId, from: chTime(startOfDayUtc(now, days - 1)) },
  );
  const byDay = new Map(rows.map((r) => [String(r.day), r]));
  const out: DailyCost[] = [];
  for (let i = days - 1; i >= 0; i--) {
    const day = startOfDayUtc(now, i).toISOString().slice(0, 10);
    const r = byDay.get(day);
    out.push({ day, cost_usd: Number(r?.cost_usd ?? 0), runs: Number(r?.runs ?? 0), total_tokens: Number(r?.total_tokens ?? 0) });
  }
  return out;
}

export interface AgentModelCost {
  agent_name: string;
  model: string;
  runs: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_usd: number;
}

/** Cost and tokens per (agent, model) over the last `days` days, most expensive first. */
export async function costByAgentAndModel(ch: ClickHouse, userId: number, days: number, limit = 200, now = new Date()): Promise<AgentModelCost[]> {
  const rows = await ch.query<Record<string, string | number>>(
    `SELECT agent_name, model, count() AS runs,
            sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens,
            sum(total_tokens) AS total_tokens, sum(cost_usd) AS cost_usd
       FROM agent_runs FINAL
      WHERE user_id = {uid:UInt64} AND coalesce(started_at, last_event_at) >= {from:DateTime64(3, 'UTC')}
      GROUP BY agent_name, model
      ORDER BY cost_usd DESC, runs DESC, agent_name, model
      LIMIT {limit:UInt32}`,
    { uid: userId, from: chTime(startOfDayUtc(now, days - 1)), limit },
  );
  return rows.map((r) => ({
    agent_name: String(r.agent_name),
    model: String(r.model),
    runs: Number(r.runs),
    prompt_tokens: Number(r.prompt_tokens),
    completion_tokens: Number(r.completion_tokens),
    total_tokens: Number(r.total_tokens),
    cost_usd: Number(r.cost_usd),
  }));
}

function startOfDayUtc(now: Date, daysBack: number): Date {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  d.setUTCDate(d.getUTCDate() - daysBack);
  return d;
}

/** ClickHouse DateTime64 literal text: "2026-11-23 00:00:00.000". */
const chTime = (d: Date): string => d.toISOString().replace("T", " ").replace("Z", "");
/** ClickHouse returns "2026-11-23 10:00:00.000" (UTC column); make it ISO. */
const toIso = (s: string): string => (s.includes("T") ? s : `${s.replace(" ", "T")}Z`);

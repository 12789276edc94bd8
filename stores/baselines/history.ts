/**
 * What a learned baseline is explained with (ClickHouse, both modes): the hourly values of one agent's metric it
 * was learned from, and the releases the agent's runs carried with when each was first seen (a release change is a
 * change point, as a config activation is: stores/config-activations.ts).
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { toChTime } from "../runs/run-query.js";

const chHour = (d: Date): string => toChTime(d.toISOString()).slice(0, 19);

export interface HourValue {
  /** The hour's start, ISO. */
  readonly hour: string;
  readonly runs: number;
  readonly value: number;
}

/** An agent's hourly values of a metric in [since, until), oldest first (at most 28 days: 672 rows). */
export async function metricHistory(
  ch: ClickHouse,
  q: { readonly projectId: number; readonly agent: string; readonly metric: string; readonly since: Date; readonly until: Date },
): Promise<HourValue[]> {
  const rows = await ch.query<{ at: string | number; runs: string | number; value: string | number }>(
    `SELECT toUnixTimestamp(hour) AS at, runs, value FROM agent_metric_hours FINAL
      WHERE project_id = {pid:UInt64} AND metric = {metric:String} AND agent_name = {agent:String}
        AND hour >= {since:DateTime('UTC')} AND hour < {until:DateTime('UTC')}
      ORDER BY hour`,
    { pid: q.projectId, metric: q.metric, agent: q.agent, since: chHour(q.since), until: chHour(q.until) },
  );
  return rows.map((r) => ({ hour: new Date(Number(r.at) * 1000).toISOString(), runs: Number(r.runs), value: Number(r.value) }));
}

export interface ReleaseSeen {
  readonly release: string;
  /** The start of its first run since `since`, ISO. */
  readonly first_seen: string;
}

/** The releases an agent's runs active since `since` carried, each with its first run's start, oldest first. */
export async function releasesSeen(ch: ClickHouse, q: { readonly projectId: number; readonly agent: string; readonly since: Date }): Promise<ReleaseSeen[]> {
  const rows = await ch.query<{ release: string; first_ms: string | number }>(
    `SELECT release, toUnixTimestamp64Milli(min(ifNull(started_at, status_at))) AS first_ms
       FROM agent_runs FINAL
      WHERE project_id = {pid:UInt64} AND agent_name = {agent:String} AND release != ''
        AND last_event_at >= {since:DateTime64(3, 'UTC')}
      GROUP BY release ORDER BY first_ms LIMIT 200`,
    { pid: q.projectId, agent: q.agent, since: toChTime(q.since.toISOString()) },
  );
  return rows.map((r) => ({ release: String(r.release), first_seen: new Date(Number(r.first_ms)).toISOString() }));
}

/** The prompts (by name) an agent's LLM calls used since `since`: whose `production` label moves are its change points. */
export async function promptsUsed(ch: ClickHouse, q: { readonly projectId: number; readonly agent: string; readonly since: Date }): Promise<string[]> {
  const rows = await ch.query<{ prompt_name: string }>(
    `SELECT DISTINCT prompt_name FROM llm_calls
      WHERE project_id = {pid:UInt64} AND agent_name = {agent:String} AND prompt_name != ''
        AND day >= toDate({since:DateTime64(3, 'UTC')}) AND started_at >= {since:DateTime64(3, 'UTC')}
      ORDER BY prompt_name LIMIT 100`,
    { pid: q.projectId, agent: q.agent, since: toChTime(q.since.toISOString()) },
  );
  return rows.map((r) => String(r.prompt_name));
}

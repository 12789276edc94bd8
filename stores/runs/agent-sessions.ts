/**
 * Sessions (docs/API.md, Sessions): a user's runs grouped by the session they name (a conversation, a LangGraph
 * thread). The SQL both ClickHouse transports run: agent_runs FINAL (each run at its latest version) grouped by
 * session_id, newest activity first, cursor-paginated like runs.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { RunRecord } from "../../core/events/run.js";
import { RUN_SELECT, decodeRun } from "./event-store.js";
import { RUN_SORT_AT, checkLimit, cursorPage, decodeCursor, sinceTime, toChTime } from "./run-query.js";

export const DEFAULT_SESSIONS_LIMIT = 50;
export const MAX_SESSIONS_LIMIT = 500;
/** Runs a session page lists (a longer session shows its first ones). */
export const MAX_SESSION_RUNS = 1000;

export interface SessionSummary {
  readonly session_id: string;
  readonly run_count: number;
  readonly first_started_at: string;
  readonly last_activity_at: string;
  readonly total_tokens: number;
  readonly total_cost_usd: number;
  /** The status of the session's latest run. */
  readonly last_status: RunRecord["status"];
  readonly agent_names: readonly string[];
}

export interface SessionFilter {
  /** Sessions with at least one run of this agent. */
  readonly agent_name?: string;
  /** ISO: sessions active at or after it. */
  readonly since?: string;
  readonly cursor?: string;
  readonly limit?: number;
}

const SUMMARY = `session_id,
  count() AS run_count,
  min(${RUN_SORT_AT}) AS first_started_at,
  max(last_event_at) AS last_activity_at,
  sum(total_tokens) AS total_tokens,
  sum(cost_usd) AS total_cost_usd,
  argMax(status, ${RUN_SORT_AT}) AS last_status,
  arraySort(groupUniqArray(10)(agent_name)) AS agent_names`;

function decodeSummary(r: Record<string, unknown>): SessionSummary {
  return {
    session_id: String(r.session_id),
    run_count: Number(r.run_count),
    first_started_at: String(r.first_started_at),
    last_activity_at: String(r.last_activity_at),
    total_tokens: Number(r.total_tokens),
    total_cost_usd: Number(r.total_cost_usd),
    last_status: r.last_status as RunRecord["status"],
    agent_names: (r.agent_names as string[]).filter(Boolean),
  };
}

export async function listSessions(ch: ClickHouse, projectId: number, filter: SessionFilter = {}): Promise<{ sessions: SessionSummary[]; next_cursor: string | null }> {
  const limit = checkLimit(filter.limit, DEFAULT_SESSIONS_LIMIT, MAX_SESSIONS_LIMIT);
  const params: Record<string, unknown> = { pid: projectId, take: limit + 1 };
  const having: string[] = [];
  if (filter.agent_name !== undefined) {
    having.push("countIf(agent_name = {agent:String}) > 0");
    params.agent = filter.agent_name;
  }
  if (filter.since !== undefined) {
    having.push("last_activity_at >= {since:DateTime64(3, 'UTC')}");
    params.since = sinceTime(filter.since);
  }
  if (filter.cursor) {
    const c = decodeCursor(filter.cursor);
    having.push("(last_activity_at, session_id) < ({cursor_at:DateTime64(3, 'UTC')}, {cursor_id:String})");
    params.cursor_at = toChTime(c.at);
    params.cursor_id = c.id;
  }
  const rows = await ch.query<Record<string, unknown>>(
    `SELECT ${SUMMARY} FROM agent_runs FINAL
     WHERE project_id = {pid:UInt64} AND session_id != ''
     GROUP BY session_id
     ${having.length ? `HAVING ${having.join(" AND ")}` : ""}
     ORDER BY last_activity_at DESC, session_id DESC
     LIMIT {take:UInt32}`,
    params,
  );
  const { page, next_cursor } = cursorPage(rows.map(decodeSummary), limit, (last) => ({ at: last.last_activity_at, id: last.session_id }));
  return { sessions: page, next_cursor };
}

/** One session with its runs in start order, or undefined when the user has no run in it. */
export async function getSession(ch: ClickHouse, projectId: number, sessionId: string): Promise<{ session: SessionSummary; runs: RunRecord[] } | undefined> {
  const params = { pid: projectId, sid: sessionId, take: MAX_SESSION_RUNS };
  // The runs first, then the summary: read side by side, the summary could be a moment older than the runs listed
  // with it (a run stored in between: two runs listed, one counted). A run only gets newer versions until retention
  // deletes it, so read after, the summary counts every run listed.
  const runs = await ch.query<Record<string, unknown>>(
    `SELECT ${RUN_SELECT} FROM agent_runs FINAL WHERE project_id = {pid:UInt64} AND session_id = {sid:String}
     ORDER BY ${RUN_SORT_AT}, external_id LIMIT {take:UInt32}`,
    params,
  );
  const summary = await ch.query<Record<string, unknown>>(
    `SELECT ${SUMMARY} FROM agent_runs FINAL WHERE project_id = {pid:UInt64} AND session_id = {sid:String} GROUP BY session_id`,
    params,
  );
  if (!summary[0]) return undefined;
  return { session: decodeSummary(summary[0]), runs: runs.map(decodeRun) };
}

/** What a turn (a run) of a session was asked and answered: its first run_start's input, its last run_end's output. */
export interface TurnContent {
  readonly input: unknown;
  readonly output: unknown;
}

/** The input and output of each of the runs (by run_id), from their stored run_start and run_end events. */
export async function turnContents(ch: ClickHouse, projectId: number, runIds: readonly string[]): Promise<Map<string, TurnContent>> {
  const out = new Map<string, { input: unknown; output: unknown }>();
  if (runIds.length === 0) return out;
  const rows = await ch.query<{ rid: string; event_type: string; payload: string }>(
    `SELECT toString(run_id) AS rid, event_type, payload FROM agent_events
     WHERE project_id = {pid:UInt64} AND run_id IN {runs:Array(UUID)} AND event_type IN ('run_start', 'run_end')
     ORDER BY event_id LIMIT 1 BY run_id, event_id`,
    { pid: projectId, runs: runIds },
  );
  for (const r of rows) {
    let payload: Record<string, unknown> = {};
    try {
      payload = JSON.parse(r.payload) as Record<string, unknown>;
    } catch { /* a payload that is not JSON shows nothing */ }
    const turn = out.get(r.rid) ?? { input: undefined, output: undefined };
    if (r.event_type === "run_start" && turn.input === undefined) turn.input = payload.input;
    if (r.event_type === "run_end" && payload.output !== undefined) turn.output = payload.output;
    out.set(r.rid, turn);
  }
  return out;
}

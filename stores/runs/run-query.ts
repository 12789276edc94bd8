/**
 * What the queries over a project's runs share (the runs list, EventStore.listRuns in event-store.ts, and the
 * sessions list, agent-sessions.ts): times as DateTime64 parameters, the opaque cursor and the limit of a page, and the
 * runs list's WHERE. Without an agent named, that WHERE leaves the LLM judge's own runs out
 * (core/events/judge-runs.ts): the list is the project's production runs; `agent_name: "runwatch-judge"` lists
 * them.
 */
import { canonicalIso } from "../../core/events/iso-time.js";
import { isStorableTime } from "../../core/events/schema.js";
import { ValidationError } from "../../core/errors.js";
import { NOT_JUDGE, NOT_JUDGE_PARAMS } from "../../core/events/judge-runs.js";
import type { RunFilter } from "../../core/ports/event-store.js";

/** ISO 8601 → `YYYY-MM-DD hh:mm:ss.sss` (UTC), the form every ClickHouse version parses for DateTime64. */
export function toChTime(iso: string): string {
  const s = canonicalIso(iso);
  return `${s.slice(0, 10)} ${s.slice(11, 23)}`;
}

/** Sort key of the runs list: start time, or the last event for a run whose run_start has not arrived. */
export const RUN_SORT_AT = "ifNull(started_at, last_event_at)";

/** The runs (and sessions) cursor: the sort key of the last row of the previous page, base64url JSON (opaque to clients). */
export interface RunCursor { at: string; id: string }
export const encodeCursor = (c: RunCursor): string => Buffer.from(JSON.stringify([c.at, c.id])).toString("base64url");
export function decodeCursor(s: string): RunCursor {
  try {
    const v = JSON.parse(Buffer.from(s, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === "string" && typeof v[1] === "string" && isStorableTime(Date.parse(v[0]))) {
      return { at: v[0], id: v[1] };
    }
  } catch { /* fall through */ }
  throw new ValidationError({ message: "cursor is not a cursor returned by this API", field: "cursor" });
}

/** A page read with LIMIT limit + 1: its first `limit` rows, and the cursor after the last of them when there are more. */
export function cursorPage<T>(rows: T[], limit: number, cursorOf: (last: T) => RunCursor): { page: T[]; next_cursor: string | null } {
  if (rows.length <= limit) return { page: rows, next_cursor: null };
  const page = rows.slice(0, limit);
  return { page, next_cursor: encodeCursor(cursorOf(page[page.length - 1]!)) };
}

/** A `since` filter as a DateTime64 parameter; a 422 naming `since` when it is not a date. */
export function sinceTime(since: string): string {
  if (Number.isNaN(Date.parse(since))) throw new ValidationError({ message: "since must be an ISO 8601 timestamp", field: "since" });
  return toChTime(since);
}

export function checkLimit(limit: number | undefined, dflt: number, max: number): number {
  if (limit === undefined) return dflt;
  if (!Number.isInteger(limit) || limit < 1 || limit > max) {
    throw new ValidationError({ message: `limit must be an integer from 1 to ${max}`, field: "limit" });
  }
  return limit;
}

/** The WHERE of a page of runs (agent_runs FINAL) for `filter`, and its parameters. */
export function runsWhere(projectId: number, filter: RunFilter): { where: string[]; params: Record<string, unknown> } {
  const params: Record<string, unknown> = { project_id: projectId };
  const where = ["project_id = {project_id:UInt64}"];
  if (filter.status !== undefined) {
    where.push("status = {status:String}");
    params.status = filter.status;
  }
  if (filter.agent_name !== undefined) {
    where.push("agent_name = {agent_name:String}");
    params.agent_name = filter.agent_name;
  } else {
    where.push(NOT_JUDGE);
    Object.assign(params, NOT_JUDGE_PARAMS);
  }
  if (filter.session_id !== undefined) {
    where.push("session_id = {session_id:String}");
    params.session_id = filter.session_id;
  }
  if (filter.since !== undefined) {
    where.push("last_event_at >= {since:DateTime64(3, 'UTC')}");
    params.since = sinceTime(filter.since);
  }
  if (filter.config_version !== undefined) {
    where.push("config_version = {config_version:UInt32}");
    params.config_version = filter.config_version;
  }
  if (filter.score_name !== undefined) {
    let range = "";
    // Bounds go as text: chDB refuses to bind a number past 2^53 that happens to be integral (1e300).
    if (filter.score_min !== undefined || filter.score_max !== undefined) range += " AND value_type IN ('number', 'boolean')";
    if (filter.score_min !== undefined) (range += " AND value_number >= {score_min:Float64}"), (params.score_min = String(filter.score_min));
    if (filter.score_max !== undefined) (range += " AND value_number <= {score_max:Float64}"), (params.score_max = String(filter.score_max));
    where.push(`run_id IN (SELECT run_id FROM scores FINAL WHERE project_id = {project_id:UInt64} AND name = {score_name:String}${range})`);
    params.score_name = filter.score_name;
  }
  if (filter.cursor) {
    const c = decodeCursor(filter.cursor);
    where.push(`(${RUN_SORT_AT}, external_id) < ({cursor_at:DateTime64(3, 'UTC')}, {cursor_id:String})`);
    params.cursor_at = toChTime(c.at);
    params.cursor_id = c.id;
  }
  return { where, params };
}

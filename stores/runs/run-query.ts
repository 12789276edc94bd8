/**
 * What the queries over a project's runs share (the runs list, EventStore.listRuns in event-store.ts, and the
 * sessions list, agent-sessions.ts): times as DateTime64 parameters, the opaque cursor and the limit of a page, and the
 * runs list's older filter fields as a RunsFilter (its SQL: runs-filter-sql.ts).
 */
import { canonicalIso } from "../../core/events/iso-time.js";
import { isStorableTime } from "../../core/events/schema.js";
import { ValidationError } from "../../core/errors.js";
import type { RunFilter } from "../../core/ports/event-store.js";
import type { RunsFilter } from "../../core/runs-filter/index.js";

/** ISO 8601 → `YYYY-MM-DD hh:mm:ss.sss` (UTC), the form every ClickHouse version parses for DateTime64. */
export function toChTime(iso: string): string {
  const s = canonicalIso(iso);
  return `${s.slice(0, 10)} ${s.slice(11, 23)}`;
}

/** Sort key of the runs list: start time, or the last event for a run whose run_start has not arrived. */
export const RUN_SORT_AT = "ifNull(started_at, last_event_at)";
/** When a run ended: its end, or when its status last changed (a run that failed without a run_end). */
export const RUN_ENDED_AT = "ifNull(ended_at, status_at)";
/** An ended run's duration in ms, from its start (from its end when it never said it started): baselines and SLOs alike. */
export const RUN_DURATION_MS = `dateDiff('millisecond', ifNull(started_at, ${RUN_ENDED_AT}), ${RUN_ENDED_AT})`;

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

/**
 * The runs list's older fields (RunFilter's status, agent_name, session_id, since, config_version, score_*) as a
 * RunsFilter, or undefined when none is given; a 422 naming `since` when it is not a date.
 */
export function legacyRunsFilter(filter: RunFilter): RunsFilter | undefined {
  const f: { -readonly [K in keyof RunsFilter]: RunsFilter[K] } = {};
  if (filter.status !== undefined) f.status = [filter.status];
  if (filter.agent_name !== undefined) f.agent = [filter.agent_name];
  if (filter.session_id !== undefined) f.session = filter.session_id;
  if (filter.since !== undefined) {
    const ms = Date.parse(filter.since);
    if (!isStorableTime(ms)) throw new ValidationError({ message: "since must be an ISO 8601 timestamp", field: "since" });
    f.from = new Date(ms).toISOString();
  }
  if (filter.config_version !== undefined) f.config_version = filter.config_version;
  if (filter.score_name !== undefined) {
    f.score = [{
      name: filter.score_name,
      ...(filter.score_min !== undefined ? { min: filter.score_min } : {}),
      ...(filter.score_max !== undefined ? { max: filter.score_max } : {}),
    }];
  }
  return Object.keys(f).length > 0 ? f : undefined;
}

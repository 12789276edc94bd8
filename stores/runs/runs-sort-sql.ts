/**
 * RunsSort (core/runs-filter/sort.ts) → the ORDER BY of the runs list and its cursor. Each sort orders by a key
 * (sort_has, sort_value, external_id): runs without a value (a duration before the run ended, a score not given)
 * have sort_has 0 and come last in either direction; external_id breaks ties, so the order is total. A cursor holds
 * the key of the last row of its page, and the next page is the rows strictly after it: a run inserted while a
 * client pages lands before the cursor (not seen) or after it (seen once), and never shifts the runs still to come.
 * A run whose value changes between pages (a running run's cost) may move across the cursor; start time never does.
 */
import { ValidationError } from "../../core/errors.js";
import { isStorableTime } from "../../core/events/schema.js";
import { scoreOfSort, type RunsSort } from "../../core/runs-filter/index.js";
import { RUN_SORT_AT } from "./run-query.js";
import { DURATION_MS, type SqlParams } from "./runs-filter-sql.js";

export interface RunsOrder {
  /** Columns to select beside the run's: sort_value, sort_has. */
  readonly select: string;
  /** A LEFT JOIN the sort needs (a score's values), or "". */
  readonly join: string;
  /** The cursor's condition, when a cursor was given. */
  readonly after?: string;
  /** The cursor given, decoded: its value (null: a run without one) and run. */
  readonly cursor?: { readonly value: string | number | null; readonly id: string };
  readonly orderBy: string;
  /** The cursor after a row of this query. */
  cursorOf(row: Record<string, unknown>): string;
}

const tagOf = (s: RunsSort): string => `${s.field} ${s.order}`;
const badCursor = (message = "cursor is not a cursor returned by this API") => new ValidationError({ message, field: "cursor" });

interface Key {
  value: string;
  /** 1 when the run has a value; undefined when every run has one. */
  has?: string;
  time?: boolean;
}

function keyOf(sort: RunsSort, p: SqlParams, project: string): { key: Key; join: string } {
  const score = scoreOfSort(sort);
  if (score !== undefined) {
    // The run's latest value of the score (the last given when it was given more than once).
    const join = `LEFT JOIN (SELECT run_id AS score_run_id, argMax(value_number, (created_at, toString(score_id))) AS score_value, 1 AS score_has
        FROM scores FINAL WHERE project_id = ${project} AND name = ${p.bind("String", score)} AND value_type IN ('number', 'boolean')
        GROUP BY run_id) AS sort_scores ON run_id = score_run_id`;
    return { key: { value: "ifNull(score_value, 0)", has: "ifNull(score_has, 0)" }, join };
  }
  switch (sort.field) {
    case "duration": return { key: { value: `ifNull(${DURATION_MS}, 0)`, has: `isNotNull(${DURATION_MS})` }, join: "" };
    case "cost": return { key: { value: "cost_usd" }, join: "" };
    case "tokens": return { key: { value: "total_tokens" }, join: "" };
    default: return { key: { value: RUN_SORT_AT, time: true }, join: "" };
  }
}

/** [value or null, external_id]; a cursor of an older version (start time, newest first) has no sort tag. */
function decodeCursor(cursor: string, sort: RunsSort, key: Key): { value: string | number | null; id: string } {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw badCursor();
  }
  if (!Array.isArray(v) || (v.length !== 2 && v.length !== 3) || typeof v[1] !== "string") throw badCursor();
  const tag = v.length === 3 ? v[2] : "start_time desc";
  if (tag !== tagOf(sort)) throw badCursor(`cursor belongs to another sort (${String(tag).slice(0, 120)}): start again without it`);
  const value = v[0] as unknown;
  const ok = key.time
    ? typeof value === "string" && isStorableTime(Date.parse(value))
    : (typeof value === "number" && Number.isFinite(value)) || (value === null && key.has !== undefined);
  if (!ok) throw badCursor();
  return { value: value as string | number | null, id: v[1] };
}

export function runsSortSql(sort: RunsSort, cursor: string | undefined, p: SqlParams, project: string): RunsOrder {
  const { key, join } = keyOf(sort, p, project);
  const dir = sort.order === "asc" ? "ASC" : "DESC";
  const orderBy = `${key.has ? `sort_has DESC, ` : ""}sort_value ${dir}, external_id ${dir}`;
  let after: string | undefined;
  const c = cursor === undefined ? undefined : decodeCursor(cursor, sort, key);
  if (c !== undefined) {
    const cmp = sort.order === "asc" ? ">" : "<";
    // A run without a value sorts as value 0 among the others without one.
    const cv = key.time ? p.time(c.value as string) : p.float((c.value as number | null) ?? 0);
    const id = p.bind("String", c.id);
    const within = `(${key.value} ${cmp} ${cv} OR (${key.value} = ${cv} AND external_id ${cmp} ${id}))`;
    after = key.has ? `(${key.has} < ${c.value === null ? 0 : 1} OR (${key.has} = ${c.value === null ? 0 : 1} AND ${within}))` : within;
  }
  return {
    select: `${key.value} AS sort_value, ${key.has ?? "1"} AS sort_has`,
    join,
    after,
    cursor: c,
    orderBy,
    cursorOf: (row) => {
      const has = Number(row.sort_has) === 1;
      const value = !has ? null : key.time ? String(row.sort_value) : Number(row.sort_value);
      return Buffer.from(JSON.stringify([value, String(row.external_id), tagOf(sort)])).toString("base64url");
    },
  };
}

/**
 * Values the runs filter bar completes (docs/API.md, GET /api/runs/filter-values): the agents, tags, metadata keys
 * (and one key's values), models, environments, releases, end users and score names seen in a project, starting
 * with a prefix (case-insensitive). Bounded: at most MAX_FILTER_VALUES answers, from the runs active in the last
 * VALUES_WINDOW_DAYS (agents and score names from all of them), so a keystroke never scans a project's history.
 *
 * Models are read from the runs too: each run version's `models` (its LLM calls' models, migration 251) and its own
 * `model` (its run_end's), the columns `model:` matches, in the granules of the window that the tags read as well;
 * not from llm_calls, which holds a row per call, several per run. Only the calls stored before the runs kept their
 * models are read (the bound `model:` reads them by, runs-filter-sql.ts): none on an install that had none then, and
 * none once they have left the window.
 */
import { NOT_JUDGE, NOT_JUDGE_PARAMS } from "../../core/events/judge-runs.js";
import { RUN_STATUSES } from "../../core/events/schema.js";
import { ValidationError } from "../../core/errors.js";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { MAX_VALUE_CHARS } from "../../core/runs-filter/index.js";
import { LLM_CALLS_BEFORE_MODELS } from "./runs-filter-sql.js";

export const MAX_FILTER_VALUES = 20;
export const VALUES_WINDOW_DAYS = 90;

/** The fields that complete (their filter token's name), and `meta.<key>` for one key's values. */
export const VALUE_FIELDS = ["status", "agent", "tag", "meta", "model", "env", "release", "user", "score"] as const;
export type ValueField = (typeof VALUE_FIELDS)[number] | `meta.${string}`;

/** A run's metadata value as text (the column holds JSON: "acme" → acme, 42 → 42). */
const META_TEXT = "if(startsWith(v, '\"'), JSONExtractString(v), v)";
const RECENT = `last_event_at >= now64(3) - INTERVAL ${VALUES_WINDOW_DAYS} DAY`;
/** The models of the window's calls stored before runs kept their models; `day` (the partition and key) bounds the read. */
const CALLS_BEFORE_MODELS = `SELECT DISTINCT model AS v FROM llm_calls WHERE project_id = {pid:UInt64}
  AND day >= toDate(now64(3) - INTERVAL ${VALUES_WINDOW_DAYS} DAY) AND started_at >= now64(3) - INTERVAL ${VALUES_WINDOW_DAYS} DAY${LLM_CALLS_BEFORE_MODELS}`;

/** SELECT … AS v of the field, over rows already narrowed to the project (and the window). */
function valuesSql(field: ValueField): string {
  const runs = (expr: string, recent = true) => `SELECT DISTINCT ${expr} AS v FROM agent_runs WHERE project_id = {pid:UInt64} AND ${NOT_JUDGE}${recent ? ` AND ${RECENT}` : ""}`;
  if (field.startsWith("meta.")) {
    return `SELECT DISTINCT ${META_TEXT} AS v FROM (SELECT metadata[{key:String}] AS v FROM agent_runs
              WHERE project_id = {pid:UInt64} AND ${NOT_JUDGE} AND ${RECENT} AND mapContains(metadata, {key:String}))`;
  }
  switch (field) {
    case "agent": return runs("agent_name", false);
    case "tag": return runs("arrayJoin(tags)");
    case "meta": return runs("arrayJoin(mapKeys(metadata))");
    case "env": return runs("environment");
    case "release": return runs("release");
    case "user": return runs("end_user");
    case "model": return `${runs("arrayJoin(arrayPushBack(models, model))")} UNION DISTINCT ${CALLS_BEFORE_MODELS}`;
    case "score": return "SELECT DISTINCT name AS v FROM scores WHERE project_id = {pid:UInt64}";
    default: throw new Error(`no values for ${field}`);
  }
}

/** Reads the `field` parameter: one of VALUE_FIELDS or `meta.<key>`; a 422 naming `field` otherwise. */
export function parseValueField(raw: string | undefined): ValueField {
  if (raw !== undefined && (VALUE_FIELDS as readonly string[]).includes(raw)) return raw as ValueField;
  if (raw !== undefined && raw.startsWith("meta.") && raw.length > 5 && raw.length <= 5 + MAX_VALUE_CHARS) return raw as ValueField;
  throw new ValidationError({ message: `field must be one of ${VALUE_FIELDS.join(", ")} or meta.<key>`, field: "field" });
}

/** Up to `limit` values of `field` in the project starting with `prefix` (any case), alphabetically. */
export async function filterValues(ch: ClickHouse, projectId: number, field: ValueField, prefix = "", limit = MAX_FILTER_VALUES): Promise<string[]> {
  if (prefix.length > MAX_VALUE_CHARS) throw new ValidationError({ message: `prefix is at most ${MAX_VALUE_CHARS} characters`, field: "prefix" });
  const n = Math.min(Math.max(1, limit), MAX_FILTER_VALUES);
  if (field === "status") return RUN_STATUSES.filter((s) => s.startsWith(prefix.toLowerCase())).slice(0, n);
  const rows = await ch.query<{ v: string }>(
    `SELECT v FROM (${valuesSql(field)}) WHERE v != '' AND startsWith(lowerUTF8(v), lowerUTF8({prefix:String})) ORDER BY v LIMIT {n:UInt32}`,
    { pid: projectId, prefix, n, key: field.startsWith("meta.") ? field.slice(5) : "", ...NOT_JUDGE_PARAMS },
  );
  return rows.map((r) => String(r.v));
}

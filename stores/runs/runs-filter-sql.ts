/**
 * RunsFilter (core/runs-filter) → the WHERE of a query over `agent_runs FINAL`, or over its rows (versions) when the
 * query picks each run's latest version itself (run-list.ts): every condition reads one row, so it holds for a run
 * when it holds for its latest version. Every value the filter holds reaches ClickHouse as a bound query parameter
 * (SqlParams.bind), never as SQL text: the SQL below is made of fixed fragments only, so no filter can change a
 * query's shape beyond the conditions it names.
 *
 * Always: the project's runs only. Unless asked for, the LLM judge's own runs (core/events/judge-runs.ts; asked for by
 * `is:judge` or by naming its agent) and runs of experiments (`is:experiment`) are left out: the list is the project's
 * production runs. Several filters AND together (the runs API's parameters and its `q`).
 */
import { JUDGE_AGENT, NOT_JUDGE, NOT_JUDGE_PARAMS } from "../../core/events/judge-runs.js";
import { SINCE_UNIT_MS, type MetadataCondition, type Range, type RunsFilter, type ScoreCondition } from "../../core/runs-filter/index.js";
import { toChTime } from "./run-query.js";

/** The parameters of one query: each bound value gets a name of its own. */
export class SqlParams {
  readonly values: Record<string, unknown> = {};
  private next = 0;
  /** `{pN:type}`, with `value` bound to it. */
  bind(type: string, value: unknown): string {
    const name = `p${this.next++}`;
    this.values[name] = value;
    return `{${name}:${type}}`;
  }
  /** A Float64 parameter goes as text: chDB refuses to bind a number past 2^53 that happens to be integral (1e300). */
  float(n: number): string {
    return this.bind("Float64", String(n));
  }
  time(iso: string): string {
    return this.bind("DateTime64(3, 'UTC')", toChTime(iso));
  }
}

/** A run's duration in ms; NULL until it has both a start and an end. */
export const DURATION_MS = "(toUnixTimestamp64Milli(ended_at) - toUnixTimestamp64Milli(started_at))";

/** A metadata value as text: a JSON string's content, any other JSON value (42, true) as written. */
const metaText = (key: string) => `if(startsWith(metadata[${key}], '"'), JSONExtractString(metadata[${key}]), metadata[${key}])`;

/**
 * The llm_calls a run's `models` may lack: those stored before migration 251 added the column (its comment says why
 * this and not a rewrite). On an install that had no calls then, the bound is 1970-01-01: no part of llm_calls is read.
 */
const MODELS_SINCE = "(SELECT max(calls_until) FROM run_models_backfill)";
export const LLM_CALLS_BEFORE_MODELS = ` AND day <= toDate(${MODELS_SINCE}) AND ended_at <= ${MODELS_SINCE}`;

/** LIKE's own characters escaped, so free text matches as typed. */
const likeContains = (text: string): string => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

function rangeSql(expr: string, r: Range | ScoreCondition, p: SqlParams): string[] {
  const out: string[] = [];
  if (r.min !== undefined) out.push(`${expr} ${r.min_exclusive ? ">" : ">="} ${p.float(r.min)}`);
  if (r.max !== undefined) out.push(`${expr} ${r.max_exclusive ? "<" : "<="} ${p.float(r.max)}`);
  return out;
}

function metadataSql(c: MetadataCondition, p: SqlParams): string {
  const key = p.bind("String", c.key);
  const has = `mapContains(metadata, ${key})`;
  switch (c.op) {
    case "exists": return has;
    case "not_exists": return `NOT ${has}`;
    // The stored text first (the value's JSON, as the pipeline writes it, or the value as written): that comparison
    // lets the bloom filter on mapValues(metadata) skip granules, where the decoded comparison reads every map.
    case "=": return `(metadata[${key}] IN ${p.bind("Array(String)", [JSON.stringify(c.value), c.value])} AND ${has} AND ${metaText(key)} = ${p.bind("String", c.value)})`;
    case "!=": return `NOT (${has} AND ${metaText(key)} = ${p.bind("String", c.value)})`;
    default: return `(${has} AND toFloat64OrNull(${metaText(key)}) ${c.op} ${p.float(c.value)})`;
  }
}

/**
 * Runs with a score of this name (run or span), any value or a number/boolean within the bounds. A superset reads the
 * rows without FINAL (a score re-written under the same id may match by an older row): the runs list settles its
 * candidates after (run-scores.ts), where FINAL would read every score of the project first.
 */
function scoreSql(s: ScoreCondition, project: string, p: SqlParams, superset: boolean): string {
  const bounds = rangeSql("value_number", s, p);
  const range = bounds.length > 0 ? ` AND value_type IN ('number', 'boolean') AND ${bounds.join(" AND ")}` : "";
  return `run_id IN (SELECT run_id FROM scores${superset ? "" : " FINAL"} WHERE project_id = ${project} AND name = ${p.bind("String", s.name)}${range})`;
}

/** The conditions of one filter (without the project scope and the judge/experiment defaults). */
function filterSql(f: RunsFilter, project: string, p: SqlParams, now: number, scoreSuperset: boolean): string[] {
  const w: string[] = [];
  const strings = (values: readonly string[]) => p.bind("Array(String)", [...values]);
  const oneOf = (column: string, values: readonly string[] | undefined, negated = false) => {
    if (values) w.push(`${column} ${negated ? "NOT IN" : "IN"} ${strings(values)}`);
  };
  if (f.from !== undefined) w.push(`last_event_at >= ${p.time(f.from)}`);
  if (f.since !== undefined) {
    const ms = Number(f.since.slice(0, -1)) * SINCE_UNIT_MS[f.since.slice(-1) as keyof typeof SINCE_UNIT_MS];
    w.push(`last_event_at >= ${p.time(new Date(Math.max(0, now - ms)).toISOString())}`);
  }
  if (f.to !== undefined) w.push(`ifNull(started_at, last_event_at) <= ${p.time(f.to)}`);
  oneOf("status", f.status);
  oneOf("status", f.status_not, true);
  oneOf("agent_name", f.agent);
  oneOf("agent_name", f.agent_not, true);
  if (f.config_version !== undefined) w.push(`config_version = ${p.bind("UInt32", f.config_version)}`);
  for (const [models, negated] of [[f.model, false], [f.model_not, true]] as const) {
    if (!models) continue;
    const m = strings(models);
    const any = `(hasAny(models, ${m}) OR model IN ${m} OR run_id IN (SELECT run_id FROM llm_calls WHERE project_id = ${project} AND model IN ${m}${LLM_CALLS_BEFORE_MODELS}))`;
    w.push(negated ? `NOT ${any}` : any);
  }
  if (f.tags_all) w.push(`hasAll(tags, ${strings(f.tags_all)})`);
  if (f.tags_any) w.push(`hasAny(tags, ${strings(f.tags_any)})`);
  if (f.tags_none) w.push(`NOT hasAny(tags, ${strings(f.tags_none)})`);
  for (const c of f.metadata ?? []) w.push(metadataSql(c, p));
  if (f.end_user !== undefined) w.push(`end_user = ${p.bind("String", f.end_user)}`);
  if (f.session !== undefined) w.push(`session_id = ${p.bind("String", f.session)}`);
  oneOf("environment", f.environment);
  oneOf("environment", f.environment_not, true);
  oneOf("release", f.release);
  oneOf("release", f.release_not, true);
  if (f.cost) w.push(...rangeSql("cost_usd", f.cost, p));
  if (f.duration_ms) w.push(...rangeSql(DURATION_MS, f.duration_ms, p));
  if (f.tokens) w.push(...rangeSql("total_tokens", f.tokens, p));
  for (const s of f.score ?? []) w.push(scoreSql(s, project, p, scoreSuperset));
  if (f.has_error !== undefined) w.push(`${f.has_error ? "" : "NOT "}(error_count > 0 OR status = 'error')`);
  for (const [terms, negated] of [[f.text, false], [f.text_not, true]] as const) {
    for (const t of terms ?? []) {
      // The events' search text; rows stored before migration 195 have theirs in run_text (until retention ends them).
      const like = p.bind("String", likeContains(t));
      w.push(`external_id ${negated ? "NOT IN" : "IN"} (SELECT sdk_run_id FROM agent_events WHERE project_id = ${project} AND search_text LIKE ${like}` +
        ` UNION ALL SELECT sdk_run_id FROM run_text WHERE project_id = ${project} AND text LIKE ${like})`);
    }
  }
  if (f.id_prefix !== undefined) {
    const prefix = p.bind("String", f.id_prefix);
    w.push(`(startsWith(external_id, ${prefix}) OR startsWith(toString(run_id), ${p.bind("String", f.id_prefix.toLowerCase())}) OR startsWith(session_id, ${prefix}))`);
  }
  return w;
}

/**
 * The WHERE conditions (to AND together) of the project's runs matching every filter in `filters`, and the project's
 * bound parameter (for the sort's own subquery). `now` (ms) is what `since` counts back from. With `scoreSuperset`, a
 * score condition may also match a run by a score's older row (scoreSql): the caller settles those itself.
 */
export function runsFilterSql(projectId: number, filters: readonly RunsFilter[], p: SqlParams, now = Date.now(), scoreSuperset = false): { where: string[]; project: string } {
  const project = p.bind("UInt64", projectId);
  const where = [`project_id = ${project}`];
  const judge = filters.some((f) => f.include_judge || f.agent?.includes(JUDGE_AGENT));
  if (!judge) where.push(NOT_JUDGE), Object.assign(p.values, NOT_JUDGE_PARAMS);
  if (!filters.some((f) => f.include_experiments)) where.push("experiment_id = ''");
  for (const f of filters) where.push(...filterSql(f, project, p, now, scoreSuperset));
  return { where, project };
}

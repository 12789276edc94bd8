/**
 * Cost and token aggregates for /costs, its CSV export and the agents' budgets. Two sources, never both for one
 * run: a run with LLM calls counts through llm_calls (migration 060: one row per call, so a run that used two
 * models splits between them, and a call counts on the day it ended); any other run through run_costs (migration
 * 050: one narrow row per run version, folded per run by ReplacingMergeTree + FINAL, its run_end figures, on the
 * UTC day of its start). A page needs one grouped scan of the range: per (day, agent, model), from which the
 * per-day, per-agent, per-model and total views are summed in memory (at most MAX_GROUPS groups). `runs` of a
 * group is the runs with cost in it: a run that used two models is one run in each model's group. Sums of groups
 * would count such a run (or one whose calls span midnight) twice, so the run counts of every view are counted
 * distinct in a second scan (costRunCounts) and replace the summed ones (withRunCounts).
 * The LLM judge's own calls (core/events/judge-runs.ts) are groups of their agent like any other; /costs shows them
 * apart, as evaluation spend: their runs are counted in views of their own (evaluation, evaluation_model), never in
 * the total, day, agent or model counts, which are the production runs'.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { JUDGE_AGENT, NOT_JUDGE_PARAMS } from "../../core/events/judge-runs.js";
import { isStorableTime } from "../../core/events/schema.js";

export const MAX_GROUPS = 100_000;
export const MAX_RANGE_DAYS = 366;

export interface CostGroup {
  day: string;
  agent_name: string;
  model: string;
  runs: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_usd: number;
  /** Part of cost_usd computed from the price table (run_end had tokens and a model, no cost_usd). */
  computed_cost_usd: number;
  computed_runs: number;
  /** Runs whose cost the client sent. */
  client_runs: number;
}

export type CostTotals = Omit<CostGroup, "day" | "agent_name" | "model">;

export interface CostRange {
  /** First day, YYYY-MM-DD (UTC). */
  from: string;
  /** Last day, inclusive. */
  to: string;
}

const n = (v: unknown): number => Number(v ?? 0);

/** One row per (day, agent, model) with runs in the range, ordered by day, agent, model. */
export async function costGroups(ch: ClickHouse, projectId: number, range: CostRange): Promise<CostGroup[]> {
  const rows = await ch.query<Record<string, unknown>>(
    `SELECT day_text, agent_name, model, sum(runs) AS runs, sum(prompt) AS prompt_tokens, sum(completion) AS completion_tokens,
            sum(total) AS total_tokens, sum(cost) AS cost, sum(computed_cost) AS computed_cost,
            sum(computed_runs) AS computed_runs, sum(client_runs) AS client_runs
       FROM (
         SELECT toString(day) AS day_text, toString(agent_name) AS agent_name, toString(model) AS model,
                uniqExact(run_id) AS runs, sum(prompt_tokens) AS prompt, sum(completion_tokens) AS completion,
                sum(total_tokens) AS total, sum(cost_usd) AS cost, sumIf(cost_usd, cost_source = 'computed') AS computed_cost,
                uniqExactIf(run_id, cost_source = 'computed') AS computed_runs, uniqExactIf(run_id, cost_source = 'client') AS client_runs
           FROM llm_calls FINAL
          WHERE project_id = {pid:UInt64} AND day >= {from:Date} AND day <= {to:Date}
          GROUP BY day, agent_name, model
         UNION ALL
         SELECT toString(day) AS day_text, toString(agent_name) AS agent_name, toString(model) AS model,
                count() AS runs, sum(prompt_tokens) AS prompt, sum(completion_tokens) AS completion,
                sum(total_tokens) AS total, sum(cost_usd) AS cost, sumIf(cost_usd, cost_source = 'computed') AS computed_cost,
                countIf(cost_source = 'computed') AS computed_runs, countIf(cost_source = 'client') AS client_runs
           FROM run_costs FINAL
          WHERE project_id = {pid:UInt64} AND day >= {from:Date} AND day <= {to:Date}
            AND external_id NOT IN (SELECT sdk_run_id FROM llm_calls WHERE project_id = {pid:UInt64})
          GROUP BY day, agent_name, model
       )
      GROUP BY day_text, agent_name, model
      ORDER BY day_text, agent_name, model
      LIMIT {limit:UInt32}`,
    { pid: projectId, from: range.from, to: range.to, limit: MAX_GROUPS },
  );
  return rows.map((r) => ({
    day: String(r.day_text),
    agent_name: String(r.agent_name),
    model: String(r.model),
    runs: n(r.runs),
    prompt_tokens: n(r.prompt_tokens),
    completion_tokens: n(r.completion_tokens),
    total_tokens: n(r.total_tokens),
    cost_usd: n(r.cost),
    computed_cost_usd: n(r.computed_cost),
    computed_runs: n(r.computed_runs),
    client_runs: n(r.client_runs),
  }));
}

export type RunCountView = "total" | "day" | "agent" | "model" | "agent_model" | "evaluation" | "evaluation_model";
export type RunCount = Pick<CostTotals, "runs" | "computed_runs" | "client_runs">;
/** Distinct runs with cost, by view and key (the key of `total` is ""; of agent_model, agent NUL model). */
export type RunCounts = ReadonlyMap<RunCountView, ReadonlyMap<string, RunCount>>;

/** The keys of an agent_model view: agent and model joined by NUL (neither may contain it). */
export const agentModelKey = (agent: string, model: string): string => `${agent}\u0000${model}`;

/**
 * Distinct runs with cost in the range: of the production runs, the total and per day, agent, model and (agent,
 * model); of the judge's runs, the total (`evaluation`) and per model (`evaluation_model`).
 */
export async function costRunCounts(ch: ClickHouse, projectId: number, range: CostRange): Promise<RunCounts> {
  const rows = await ch.query<Record<string, unknown>>(
    `SELECT view, key, uniqExact(rid) AS runs, uniqExactIf(rid, src = 'computed') AS computed_runs, uniqExactIf(rid, src = 'client') AS client_runs
       FROM (
         SELECT rid, src, arrayJoin(if(agent = {judge_agent:String}, [('evaluation', ''), ('evaluation_model', model)],
                  [('total', ''), ('day', day_text), ('agent', agent), ('model', model), ('agent_model', concat(agent, '\\0', model))])) AS vk,
                vk.1 AS view, vk.2 AS key
           FROM (
             SELECT toString(sdk_run_id) AS rid, toString(cost_source) AS src, toString(day) AS day_text, toString(agent_name) AS agent, toString(model) AS model
               FROM llm_calls FINAL
              WHERE project_id = {pid:UInt64} AND day >= {from:Date} AND day <= {to:Date}
             UNION ALL
             SELECT toString(external_id), toString(cost_source), toString(day), toString(agent_name), toString(model)
               FROM run_costs FINAL
              WHERE project_id = {pid:UInt64} AND day >= {from:Date} AND day <= {to:Date}
                AND external_id NOT IN (SELECT sdk_run_id FROM llm_calls WHERE project_id = {pid:UInt64})
           )
       )
      GROUP BY view, key
      LIMIT {limit:UInt32}`,
    { pid: projectId, from: range.from, to: range.to, limit: MAX_GROUPS * 5, ...NOT_JUDGE_PARAMS },
  );
  const out = new Map<RunCountView, Map<string, RunCount>>();
  for (const r of rows) {
    const view = String(r.view) as RunCountView;
    let m = out.get(view);
    if (!m) out.set(view, (m = new Map()));
    m.set(String(r.key), { runs: n(r.runs), computed_runs: n(r.computed_runs), client_runs: n(r.client_runs) });
  }
  return out;
}

/** The groups of the production runs, and those of the judge's calls (evaluation spend). */
export function splitEvaluation(groups: readonly CostGroup[]): { production: CostGroup[]; evaluation: CostGroup[] } {
  return { production: groups.filter((g) => g.agent_name !== JUDGE_AGENT), evaluation: groups.filter((g) => g.agent_name === JUDGE_AGENT) };
}

/** Rows summed from groups, with their run counts replaced by the distinct ones of `view`. */
export function withRunCounts<T extends CostTotals & { key: string }>(rows: T[], counts: RunCounts, view: RunCountView): T[] {
  const m = counts.get(view);
  return rows.map((r) => ({ ...r, ...(m?.get(r.key) ?? {}) }));
}

const zero = (): CostTotals => ({ runs: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost_usd: 0, computed_cost_usd: 0, computed_runs: 0, client_runs: 0 });

function add(into: CostTotals, g: CostTotals): void {
  into.runs += g.runs;
  into.prompt_tokens += g.prompt_tokens;
  into.completion_tokens += g.completion_tokens;
  into.total_tokens += g.total_tokens;
  into.cost_usd += g.cost_usd;
  into.computed_cost_usd += g.computed_cost_usd;
  into.computed_runs += g.computed_runs;
  into.client_runs += g.client_runs;
}

export function totalOf(groups: readonly CostGroup[]): CostTotals {
  const t = zero();
  for (const g of groups) add(t, g);
  return t;
}

/** Groups summed by a key (e.g. day, agent, model), most expensive first unless `sortByKey`. */
export function rollUp<K extends string>(groups: readonly CostGroup[], key: (g: CostGroup) => K, sortByKey = false): (CostTotals & { key: K })[] {
  const m = new Map<K, CostTotals & { key: K }>();
  for (const g of groups) {
    const k = key(g);
    let t = m.get(k);
    if (!t) m.set(k, (t = { key: k, ...zero() }));
    add(t, g);
  }
  const out = [...m.values()];
  return sortByKey ? out.sort((a, b) => a.key.localeCompare(b.key)) : out.sort((a, b) => b.cost_usd - a.cost_usd || b.runs - a.runs || a.key.localeCompare(b.key));
}

/** Every day of the range with its totals (zero days included, for the chart). */
export function perDay(groups: readonly CostGroup[], range: CostRange): (CostTotals & { day: string })[] {
  const byDay = new Map(rollUp(groups, (g) => g.day).map((t) => [t.key, t]));
  const out: (CostTotals & { day: string })[] = [];
  for (let d = new Date(`${range.from}T00:00:00Z`); d <= new Date(`${range.to}T00:00:00Z`); d.setUTCDate(d.getUTCDate() + 1)) {
    const day = d.toISOString().slice(0, 10);
    const t = byDay.get(day);
    out.push({ day, ...(t ? { ...t } : zero()) });
  }
  return out;
}

/** Spend this calendar month (UTC) per agent name. */
export async function agentMonthSpend(ch: ClickHouse, projectId: number, agents?: readonly string[], now = new Date()): Promise<Map<string, number>> {
  const first = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString().slice(0, 10);
  const only = agents ? "AND agent_name IN {agents:Array(String)}" : "";
  const rows = await ch.query<{ agent_name: string; cost_usd: unknown }>(
    `SELECT agent_name, sum(cost) AS cost_usd
       FROM (
         SELECT toString(agent_name) AS agent_name, sum(cost_usd) AS cost
           FROM llm_calls FINAL WHERE project_id = {pid:UInt64} AND day >= {from:Date} ${only} GROUP BY agent_name
         UNION ALL
         SELECT toString(agent_name) AS agent_name, sum(cost_usd) AS cost
           FROM run_costs FINAL
          WHERE project_id = {pid:UInt64} AND day >= {from:Date} ${only}
            AND external_id NOT IN (SELECT sdk_run_id FROM llm_calls WHERE project_id = {pid:UInt64})
          GROUP BY agent_name
       )
      GROUP BY agent_name`,
    agents ? { pid: projectId, from: first, agents } : { pid: projectId, from: first },
  );
  return new Map(rows.map((r) => [String(r.agent_name), n(r.cost_usd)]));
}

/** A range of whole UTC days from query text (YYYY-MM-DD), defaulting to the last `defaultDays` days. */
export function parseRange(from: string | undefined, to: string | undefined, defaultDays = 30, now = new Date()): CostRange & { error?: string } {
  const today = now.toISOString().slice(0, 10);
  const valid = (s: string | undefined) => (s && /^\d{4}-\d{2}-\d{2}$/.test(s) && isStorableTime(Date.parse(`${s}T00:00:00Z`)) ? s : undefined);
  const shift = (day: string, days: number) => {
    const d = new Date(`${day}T00:00:00Z`);
    d.setUTCDate(d.getUTCDate() + days);
    return d.toISOString().slice(0, 10);
  };
  let error: string | undefined;
  if ((from && !valid(from)) || (to && !valid(to))) error = "Dates must look like 2026-11-23, between 1970-01-01 and 2200-12-31.";
  let end = valid(to) ?? today;
  let start = valid(from) ?? shift(end, -(defaultDays - 1));
  if (start > end) {
    error = "The range starts after it ends; showing it the other way round.";
    [start, end] = [end, start];
  }
  const days = Math.round((Date.parse(`${end}T00:00:00Z`) - Date.parse(`${start}T00:00:00Z`)) / 86_400_000) + 1;
  if (days > MAX_RANGE_DAYS) {
    error = `A range is at most ${MAX_RANGE_DAYS} days; showing the last ${MAX_RANGE_DAYS} days up to ${end}.`;
    start = shift(end, -(MAX_RANGE_DAYS - 1));
  }
  return error ? { from: start, to: end, error } : { from: start, to: end };
}

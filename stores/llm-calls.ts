/**
 * LLM calls (ClickHouse `llm_calls`, docs/STORAGE.md): one row per ended call, keyed so that a row written again (a
 * replayed part) folds away. plugins/llm-calls.ts makes the rows.
 */
import type { ClickHouse } from "../core/ports/clickhouse.js";

/** Stores llm_calls rows. */
export const insertLlmCallRows = (ch: ClickHouse, rows: readonly Record<string, unknown>[]): Promise<void> => ch.insert("llm_calls", rows);

/** What the LLM calls that used one version of a prompt add up to (docs/PROMPTS.md). */
export interface PromptVersionUsage {
  readonly version: number;
  readonly runs: number;
  readonly calls: number;
  readonly errors: number;
  readonly p50_ms: number;
  readonly p95_ms: number;
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly cost_usd: number;
}

/** Per version of the prompt `name`, its calls in the project: one grouped scan (at most `limit` versions, newest first). */
export async function promptVersionUsage(ch: ClickHouse, projectId: number, name: string, limit = 200): Promise<PromptVersionUsage[]> {
  const rows = await ch.query<Record<string, unknown>>(
    `SELECT prompt_version AS version, uniqExact(run_id) AS runs, count() AS calls, countIf(status = 'error') AS errors,
            quantile(0.5)(duration_ms) AS p50, quantile(0.95)(duration_ms) AS p95,
            sum(prompt_tokens) AS prompt, sum(completion_tokens) AS completion, sum(cost_usd) AS cost
       FROM llm_calls FINAL
      WHERE project_id = {pid:UInt64} AND prompt_name = {name:String} AND prompt_version > 0
      GROUP BY prompt_version ORDER BY prompt_version DESC LIMIT {limit:UInt32}`,
    { pid: projectId, name, limit },
  );
  const n = (v: unknown) => Number(v ?? 0);
  return rows.map((r) => ({
    version: n(r.version), runs: n(r.runs), calls: n(r.calls), errors: n(r.errors), p50_ms: Math.round(n(r.p50)), p95_ms: Math.round(n(r.p95)),
    prompt_tokens: n(r.prompt), completion_tokens: n(r.completion), cost_usd: n(r.cost),
  }));
}

/** The mean of one score over the runs whose LLM calls used one version of a prompt. */
export interface PromptVersionScore {
  readonly version: number;
  readonly name: string;
  readonly mean: number;
  readonly count: number;
}

/**
 * Per version of the prompt `name`, the mean of each numeric or boolean score given to the runs that called it (a
 * run that used two versions counts for both); string scores left out. One join of the prompt's runs with the
 * project's scores, at most `limit` rows, the newest versions first.
 */
export async function promptVersionScores(ch: ClickHouse, projectId: number, name: string, limit = 1_000): Promise<PromptVersionScore[]> {
  const rows = await ch.query<Record<string, unknown>>(
    `SELECT v.version AS version, s.name AS name, avg(s.value_number) AS mean, count() AS n
       FROM (SELECT run_id, name, value_number FROM scores FINAL
              WHERE project_id = {pid:UInt64} AND value_type IN ('number', 'boolean')) AS s
       JOIN (SELECT DISTINCT run_id, prompt_version AS version FROM llm_calls FINAL
              WHERE project_id = {pid:UInt64} AND prompt_name = {name:String} AND prompt_version > 0) AS v ON v.run_id = s.run_id
      GROUP BY version, name ORDER BY version DESC, name LIMIT {limit:UInt32}`,
    { pid: projectId, name, limit },
  );
  return rows.map((r) => ({ version: Number(r.version), name: String(r.name), mean: Number(r.mean), count: Number(r.n) }));
}

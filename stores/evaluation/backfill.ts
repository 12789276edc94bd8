/**
 * Backfill (docs/EVALUATION.md): a run rule applied to the project's runs that ended in a past time range — the
 * rule's run filter read in ClickHouse, its sample taken by the same hash as online, at most MAX_BACKFILL_RUNS runs.
 * Without `confirm` it only counts and estimates the cost: the evaluator's mean cost per call so far, or, before its
 * first call, the judge model's price for the template and a typical run.
 */
import { ValidationError } from "../../core/errors.js";
import { toChTime } from "../../core/clickhouse/event-store.js";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { Sql } from "../../core/ports/sql.js";
import type { PubSub } from "../../core/ports/pubsub.js";
import { EVALUATION_JOBS_CHANNEL, enqueueJobs, type NewJob } from "./jobs.js";
import { JUDGE_AGENT, sampled } from "./rule-filter.js";
import type { EvaluationRule } from "./rules.js";

export const MAX_BACKFILL_RUNS = 100_000;
export const MAX_BACKFILL_DAYS = 366;

export interface BackfillRange { readonly from: string; readonly to: string }

export function parseRange(body: Record<string, unknown>): BackfillRange {
  const at = (field: "from" | "to") => {
    const v = body[field];
    const ms = typeof v === "string" ? Date.parse(v) : NaN;
    if (!Number.isFinite(ms)) throw new ValidationError({ field, message: `${field} must be an ISO 8601 time such as 2026-11-01T00:00:00Z` });
    return ms;
  };
  const from = at("from");
  const to = at("to");
  if (to <= from) throw new ValidationError({ field: "to", message: "to must be after from" });
  if (to - from > MAX_BACKFILL_DAYS * 86_400_000) throw new ValidationError({ field: "to", message: `a backfill covers at most ${MAX_BACKFILL_DAYS} days` });
  return { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
}

/** The ended runs of the range that pass the rule's run filter and its sample. */
export async function backfillRuns(ch: ClickHouse, rule: EvaluationRule, range: BackfillRange): Promise<{ matching: number; sample: { sdk_run_id: string; run_id: string }[] }> {
  const f = rule.filter;
  const cond = [
    "status IN ('success', 'error')",
    "agent_name != {judge:String}",
    ...(f.agent_name !== undefined ? ["agent_name = {agent:String}"] : []),
    ...(f.config_version !== undefined ? ["config_version = {version:UInt32}"] : []),
    ...(f.status !== undefined ? ["status = {status:String}"] : []),
    ...(f.session_id !== undefined ? ["session_id = {session:String}"] : []),
    ...(f.experiment_id !== undefined ? ["experiment_id = {experiment:String}"] : []),
    ...(f.has_error !== undefined ? [f.has_error ? "(error_count > 0 OR status = 'error')" : "(error_count = 0 AND status != 'error')"] : []),
  ];
  const rows = await ch.query<{ external_id: string; run_id: string }>(
    `SELECT external_id, toString(run_id) AS run_id FROM agent_runs FINAL
      WHERE project_id = {pid:UInt64} AND ended_at >= {from:DateTime64(3, 'UTC')} AND ended_at < {to:DateTime64(3, 'UTC')} AND ${cond.join(" AND ")}
      ORDER BY ended_at LIMIT {max:UInt32}`,
    {
      pid: rule.project_id, from: toChTime(range.from), to: toChTime(range.to), judge: JUDGE_AGENT, max: MAX_BACKFILL_RUNS,
      ...(f.agent_name !== undefined ? { agent: f.agent_name } : {}), ...(f.config_version !== undefined ? { version: f.config_version } : {}),
      ...(f.status !== undefined ? { status: f.status } : {}), ...(f.session_id !== undefined ? { session: f.session_id } : {}),
      ...(f.experiment_id !== undefined ? { experiment: f.experiment_id } : {}),
    },
  );
  const sample = rows.filter((r) => sampled(rule.id, r.run_id, "", rule.sampling)).map((r) => ({ sdk_run_id: r.external_id, run_id: r.run_id }));
  return { matching: rows.length, sample };
}

/** The evaluator's mean cost per judge call so far, and over how many calls. */
export async function meanJudgeCost(sql: Sql, evaluatorId: string): Promise<{ mean: number; calls: number }> {
  const [row] = await sql.query<Record<string, unknown>>(
    `SELECT count(*) AS calls, coalesce(avg(cost_usd), 0) AS mean FROM (SELECT cost_usd FROM evaluation_jobs WHERE evaluator_id = $1 AND status IN ('done', 'failed') AND cost_usd > 0 ORDER BY id DESC LIMIT 1000) recent`,
    [evaluatorId],
  );
  return { mean: Number(row?.mean ?? 0), calls: Number(row?.calls ?? 0) };
}

/** Queues the sample as backfill jobs, due now, and wakes the workers. */
export async function queueBackfill(deps: { sql: Sql; pubsub: PubSub }, rule: EvaluationRule, sample: readonly { sdk_run_id: string; run_id: string }[]): Promise<number> {
  const { sql } = deps;
  const now = new Date();
  let queued = 0;
  for (let i = 0; i < sample.length; i += 5_000) {
    const jobs: NewJob[] = sample.slice(i, i + 5_000).map((r) => ({
      project_id: rule.project_id, rule_id: rule.id, evaluator_id: rule.evaluator_id, sdk_run_id: r.sdk_run_id, run_id: r.run_id, span_id: "", due_at: now,
    }));
    queued += await enqueueJobs(sql, jobs, "backfill");
  }
  await deps.pubsub.publish(EVALUATION_JOBS_CHANNEL, String(queued));
  return queued;
}

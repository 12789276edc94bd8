/**
 * evaluation_failure_rate_above: among the project's evaluation jobs (docs/EVALUATION.md, Online rules) that
 * finished in the last `window_minutes`, the share that failed — the judge answered something that is not a valid
 * score, refused, or gave up after its retries — is at or above `threshold_pct`, with at least `min_jobs` of them in
 * the window; optionally for one evaluator. Counted in Postgres (evaluation_jobs) by the sweep. While the rate stays
 * high it fires once per window (the key is the window's slot).
 */
import { Schema } from "effect";
import { finishedEvaluationJobs } from "../../stores/alerts/trigger-reads.js";
import type { AlertContext, AlertFiring, AlertRule } from "../model.js";
import { COOLDOWN_FIELD, cooldownField, defineTrigger, windowMinutesField, minimumCountField, percentThresholdField, windowFormField, sweepEachRule } from "./define.js";

interface Config {
  threshold_pct: number;
  window_minutes: number;
  min_jobs: number;
  evaluator_name?: string;
}

export function evaluationFailures(ctx: AlertContext, rule: AlertRule, now: Date): Promise<{ failed: number; finished: number }> {
  const c = rule.config as unknown as Config;
  const since = new Date(now.getTime() - c.window_minutes * 60_000);
  return finishedEvaluationJobs(ctx.sql, { projectId: rule.project_id, since, evaluatorName: c.evaluator_name });
}

export function checkFailures(rule: AlertRule, n: { failed: number; finished: number }, now: Date): AlertFiring | undefined {
  const c = rule.config as unknown as Config;
  if (n.finished === 0 || n.finished < c.min_jobs) return undefined;
  const pct = (n.failed / n.finished) * 100;
  if (pct < c.threshold_pct) return undefined;
  const of = c.evaluator_name ? ` of ${c.evaluator_name}` : "";
  return {
    key: `evaluation-failures:${Math.floor(now.getTime() / (c.window_minutes * 60_000))}`,
    rule,
    message: `Evaluation failure rate${of} is ${pct.toFixed(1)}% (${n.failed} of ${n.finished} judge jobs in the last ${c.window_minutes} min), at or above ${c.threshold_pct}%`,
    details: { failure_rate_pct: Number(pct.toFixed(2)), failed: n.failed, finished: n.finished, window_minutes: c.window_minutes, threshold_pct: c.threshold_pct, min_jobs: c.min_jobs },
  };
}

export const evaluationFailureRateAbove = defineTrigger({
  type: "evaluation_failure_rate_above",
  label: "Evaluation failure rate above",
  description: "The share of evaluation jobs that end in an evaluation error (a malformed judge answer, a refusal, retries used up) over a sliding window reaches a threshold.",
  schema: Schema.Struct({
    threshold_pct: percentThresholdField,
    window_minutes: windowMinutesField(60, 1440),
    min_jobs: minimumCountField(10),
    evaluator_name: Schema.optional(Schema.String.pipe(Schema.trimmed({ message: () => "must not start or end with spaces" }), Schema.maxLength(100))),
    cooldown_seconds: cooldownField,
  }),
  fields: [
    { name: "threshold_pct", label: "Failure rate (%)", kind: "number", step: "any", required: true, placeholder: "20" },
    windowFormField(60),
    { name: "min_jobs", label: "Minimum jobs in window", kind: "number", step: "1", placeholder: "10", help: "Below this many finished jobs the rate is not judged." },
    { name: "evaluator_name", label: "Evaluator (optional)", kind: "text", placeholder: "helpfulness", help: "Only this evaluator's jobs; empty: all of the project's." },
    COOLDOWN_FIELD,
  ],
  defaultCooldownSeconds: 3600,
  sweep: sweepEachRule(async (rule, ctx, now) => checkFailures(rule, await evaluationFailures(ctx, rule, now), now)),
});

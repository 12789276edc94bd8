/**
 * A backfill (docs/EVALUATORS.md), as the API and the evaluator's page start it: a rule applied to the runs (or
 * spans) that ended in a past range. Without `confirm`, the estimate only — the matching runs, the rule's sample of them, and
 * the cost (the rule's evaluator's mean cost per call so far, or before its first call the model's price for the
 * template and a typical run, priced by @pydantic/genai-prices as agents-service prices the call); with it, the jobs
 * too, recorded in the project's audit log.
 */
import { isAgentsFailure } from "../../core/agents/client.js";
import { judgeTarget, serviceDefaults } from "../../core/agents/judge-estimate.js";
import { callCost } from "../../core/agents/prices.js";
import { audit } from "../../stores/accounts/projects.js";
import { ValidationError } from "../../core/errors.js";
import { backfillTargets, queueBackfill, type BackfillRange } from "./backfill.js";
import { findEvaluator, type Evaluator } from "../../stores/evaluation/evaluators.js";
import { listProviderKeys } from "../../stores/evaluation/provider-keys.js";
import { type EvaluationRule } from "../../stores/evaluation/rules.js";
import type { EvaluationDeps } from "../deps.js";
import { meanJudgeCost } from "../../stores/evaluation/jobs.js";
import { routesScoredRuns } from "../rules.js";

/** Tokens of a judge call before any was made: the template and typical values in, a short verdict out. */
const TYPICAL_PROMPT_TOKENS = 1_500;
const TYPICAL_ANSWER_TOKENS = 150;

let defaults: ReturnType<typeof serviceDefaults> | undefined;

/**
 * The estimated cost of `calls` judge calls of an evaluator, and what the estimate rests on. The model is the one the
 * call would use (core/agents/judge-estimate.ts judgeTarget), priced from the same table agents-service charges with.
 */
async function estimateCost(deps: EvaluationDeps, projectId: number, e: Evaluator, calls: number): Promise<{ estimated_cost_usd: number | null; basis: string }> {
  if (e.definition.type !== "llm_judge") return { estimated_cost_usd: 0, basis: "a built-in check calls no model" };
  const mean = await meanJudgeCost(deps.ports.sql, e.id);
  if (mean.calls > 0) return { estimated_cost_usd: round(mean.mean * calls), basis: `the mean cost of this evaluator's last ${mean.calls} judge calls` };
  const service = await (defaults ??= serviceDefaults(deps.ports.config))();
  if (isAgentsFailure(service)) return { estimated_cost_usd: null, basis: `no estimate: ${service.message}` };
  const def = e.definition;
  // As the judge call will: the evaluator's provider, else the project's first own key's, else the service's default.
  const keys = await listProviderKeys(deps.ports.sql, projectId);
  const key = def.provider ? keys.find((k) => k.provider === def.provider) : keys[0];
  const target = judgeTarget({ provider: def.provider ?? key?.provider, model: def.model ?? key?.default_model ?? undefined, ownKey: key !== undefined }, service);
  if (!target) return { estimated_cost_usd: null, basis: "no estimate: agents-service has no provider configured" };
  const tokensIn = TYPICAL_PROMPT_TOKENS + Math.ceil(def.prompt.length / 4);
  const perCall = callCost(target.provider, target.model, tokensIn, TYPICAL_ANSWER_TOKENS);
  if (perCall === null) return { estimated_cost_usd: null, basis: `no estimate: the price of ${target.model} is not known` };
  return { estimated_cost_usd: round(perCall * calls), basis: `${target.model}'s price for about ${tokensIn} tokens in and ${TYPICAL_ANSWER_TOKENS} out per call` };
}
const round = (x: number) => Math.round(x * 1e6) / 1e6;

export interface BackfillEstimate {
  readonly from: string;
  readonly to: string;
  readonly matching_runs: number;
  readonly sampled_runs: number;
  readonly estimated_cost_usd: number | null;
  readonly basis: string;
}

/**
 * The estimate of backfilling `rule` over `range`, and with `confirm` the jobs queued (`queued`; for a rule without
 * an evaluator, the items added to its queue). Runs or spans, as the rule targets.
 */
export async function backfill(deps: EvaluationDeps, rule: EvaluationRule, range: BackfillRange, confirm: boolean, actorId: number | null): Promise<{ estimate: BackfillEstimate; queued?: number }> {
  if (routesScoredRuns(rule)) throw new ValidationError({ field: "queue_action.score_name", message: "a rule on scores given applies to scores as they are given; it has no backfill" });
  const { matching, sample } = await backfillTargets(deps.ports.clickhouse, rule, range);
  const evaluator = rule.evaluator_id === null ? undefined : await findEvaluator(deps.ports.sql, rule.project_id, rule.evaluator_id);
  const cost = evaluator ? await estimateCost(deps, rule.project_id, evaluator, sample.length) : { estimated_cost_usd: 0, basis: "a rule without an evaluator calls no model" };
  const estimate = { from: range.from, to: range.to, matching_runs: matching, sampled_runs: sample.length, ...cost };
  if (!confirm) return { estimate };
  const queued = await queueBackfill(deps.ports, rule, sample);
  await audit(deps.ports.sql, rule.project_id, actorId, "evaluation_rule.backfill", rule.name, {
    rule_id: rule.id, from: range.from, to: range.to, queued, estimated_cost_usd: estimate.estimated_cost_usd,
  });
  return { estimate, queued };
}

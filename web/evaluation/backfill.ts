/**
 * A backfill (docs/EVALUATORS.md), as the API and the evaluator's page start it: a rule applied to the runs (or
 * spans) that ended in a past range. Without `confirm`, the estimate only — the matching runs, the rule's sample of them, and
 * the cost (the rule's evaluator's mean cost per call so far, or before its first call the model's price for the
 * template and a typical run, from agents-service's GET /providers); with it, the jobs too.
 */
import { callAgents, isAgentsFailure } from "../../core/agents/client.js";
import { ValidationError } from "../../core/errors.js";
import { backfillTargets, meanJudgeCost, queueBackfill, type BackfillRange } from "../../stores/evaluation/backfill.js";
import { findEvaluator, type Evaluator } from "../../stores/evaluation/evaluators.js";
import { listProviderKeys } from "../../stores/evaluation/provider-keys.js";
import { routesScoredRuns, type EvaluationRule } from "../../stores/evaluation/rules.js";
import type { WebDeps } from "../deps.js";

/** Tokens of a judge call before any was made: the template and typical values in, a short verdict out. */
const TYPICAL_PROMPT_TOKENS = 1_500;
const TYPICAL_ANSWER_TOKENS = 150;

interface ProvidersBody { providers: Array<{ id: string; default_model: string; models: Array<{ id: string; price_usd: { input_per_mtok: number; output_per_mtok: number } | null }> }> }

/** The estimated cost of `calls` judge calls of an evaluator, and what the estimate rests on. */
async function estimateCost(deps: WebDeps, projectId: number, e: Evaluator, calls: number): Promise<{ estimated_cost_usd: number | null; basis: string }> {
  if (e.definition.type !== "llm_judge") return { estimated_cost_usd: 0, basis: "a built-in check calls no model" };
  const mean = await meanJudgeCost(deps.ports.sql, e.id);
  if (mean.calls > 0) return { estimated_cost_usd: round(mean.mean * calls), basis: `the mean cost of this evaluator's last ${mean.calls} judge calls` };
  const providers = await callAgents<ProvidersBody>(deps.ports.config, "/providers", { timeoutMs: 3_000 });
  if (isAgentsFailure(providers)) return { estimated_cost_usd: null, basis: `no estimate: ${providers.message}` };
  const def = e.definition;
  // As the judge call will: the evaluator's provider, else the project's first own key's, else the service's default.
  const keys = await listProviderKeys(deps.ports.sql, projectId);
  const providerId = def.provider ?? keys[0]?.provider;
  const provider = providers.providers.find((p) => p.id === providerId) ?? providers.providers[0];
  const modelId = def.model ?? keys.find((k) => k.provider === provider?.id)?.default_model ?? provider?.default_model;
  const price = provider?.models.find((m) => m.id === modelId)?.price_usd;
  if (!price) return { estimated_cost_usd: null, basis: `no estimate: the price of ${modelId ?? "the model"} is not known` };
  const tokensIn = TYPICAL_PROMPT_TOKENS + Math.ceil(def.prompt.length / 4);
  const perCall = (tokensIn * price.input_per_mtok + TYPICAL_ANSWER_TOKENS * price.output_per_mtok) / 1e6;
  return { estimated_cost_usd: round(perCall * calls), basis: `${modelId}'s price for about ${tokensIn} tokens in and ${TYPICAL_ANSWER_TOKENS} out per call` };
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
export async function backfill(deps: WebDeps, rule: EvaluationRule, range: BackfillRange, confirm: boolean): Promise<{ estimate: BackfillEstimate; queued?: number }> {
  if (routesScoredRuns(rule)) throw new ValidationError({ field: "queue_action.score_name", message: "a rule on scores given applies to scores as they are given; it has no backfill" });
  const { matching, sample } = await backfillTargets(deps.ports.clickhouse, rule, range);
  const evaluator = rule.evaluator_id === null ? undefined : await findEvaluator(deps.ports.sql, rule.project_id, rule.evaluator_id);
  const cost = evaluator ? await estimateCost(deps, rule.project_id, evaluator, sample.length) : { estimated_cost_usd: 0, basis: "a rule without an evaluator calls no model" };
  const estimate = { from: range.from, to: range.to, matching_runs: matching, sampled_runs: sample.length, ...cost };
  if (!confirm) return { estimate };
  return { estimate, queued: await queueBackfill(deps.ports, rule, sample) };
}

/**
 * Online evaluation rules API (Bearer key with scope read+ingest; docs/EVALUATION.md, Online rules):
 *
 *   POST   /api/evaluation-rules {evaluator_id, target, filter?, sampling, delay_s?, name?, queue_action?} → 201 {rule}
 *   GET    /api/evaluation-rules?evaluator_id          → {rules: [...]}
 *   GET    /api/evaluation-rules/{id}                  → {rule}
 *   PATCH  /api/evaluation-rules/{id} {enabled}        → {rule}
 *   DELETE /api/evaluation-rules/{id}                  → 204
 *   POST   /api/evaluation-rules/{id}/backfill {from, to, confirm?}
 *          without confirm: 200 {estimate: {matching_runs, sampled_runs, estimated_cost_usd, basis}}
 *          with confirm: true: 202 {queued, estimate}
 */
import type Router from "@koa/router";
import { callAgents, isAgentsFailure } from "../../core/agents/client.js";
import { ValidationError } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import { backfillRuns, meanJudgeCost, parseRange, queueBackfill } from "../../stores/evaluation/backfill.js";
import { EVALUATION_JOBS_CHANNEL } from "../../stores/evaluation/jobs.js";
import { findEvaluator, type Evaluator } from "../../stores/evaluation/evaluators.js";
import { createRule, deleteRule, listRules, ruleJson, ruleWithId, setRuleEnabled } from "../../stores/evaluation/rules.js";
import type { WebDeps } from "../deps.js";
import { readJsonBody } from "../json-body.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { readAuthorizer, stringParam } from "./read-api.js";

/** Tokens of a judge call before any was made: the template and typical values in, a short verdict out. */
const TYPICAL_PROMPT_TOKENS = 1_500;
const TYPICAL_ANSWER_TOKENS = 150;

interface ProvidersBody { providers: Array<{ id: string; default_model: string; models: Array<{ id: string; price_usd: { input_per_mtok: number; output_per_mtok: number } | null }> }> }

/** The estimated cost of `calls` judge calls of an evaluator, and what the estimate rests on. */
export async function estimateCost(deps: WebDeps, e: Evaluator, calls: number): Promise<{ estimated_cost_usd: number | null; basis: string }> {
  if (e.definition.type !== "llm_judge") return { estimated_cost_usd: 0, basis: "a built-in check calls no model" };
  const mean = await meanJudgeCost(deps.ports.sql, e.id);
  if (mean.calls > 0) return { estimated_cost_usd: round(mean.mean * calls), basis: `the mean cost of this evaluator's last ${mean.calls} judge calls` };
  const providers = await callAgents<ProvidersBody>(deps.ports.config, "/providers", { timeoutMs: 3_000 });
  if (isAgentsFailure(providers)) return { estimated_cost_usd: null, basis: `no estimate: ${providers.message}` };
  const def = e.definition;
  const provider = providers.providers.find((p) => p.id === def.provider) ?? providers.providers[0];
  const modelId = def.model ?? provider?.default_model;
  const price = provider?.models.find((m) => m.id === modelId)?.price_usd;
  if (!price) return { estimated_cost_usd: null, basis: `no estimate: the price of ${modelId ?? "the model"} is not known` };
  const tokensIn = TYPICAL_PROMPT_TOKENS + Math.ceil(def.prompt.length / 4);
  const perCall = (tokensIn * price.input_per_mtok + TYPICAL_ANSWER_TOKENS * price.output_per_mtok) / 1e6;
  return { estimated_cost_usd: round(perCall * calls), basis: `${modelId}'s price for about ${tokensIn} tokens in and ${TYPICAL_ANSWER_TOKENS} out per call` };
}
const round = (x: number) => Math.round(x * 1e6) / 1e6;

export function registerEvaluationRulesApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  const authorize = readAuthorizer(deps, auth);
  const { sql, clickhouse } = deps.ports;

  router.post("/api/evaluation-rules", async (ctx) => {
    const p = await authorize(ctx);
    const rule = await createRule(deps.ports, p.projectId, p.userId, await readJsonBody(ctx, 64 * 1024));
    ctx.status = 201;
    ctx.body = { rule: ruleJson(rule) };
  });

  router.get("/api/evaluation-rules", async (ctx) => {
    const p = await authorize(ctx);
    const evaluatorId = stringParam(ctx, "evaluator_id");
    if (evaluatorId !== undefined && !isUuid(evaluatorId)) throw new ValidationError({ field: "evaluator_id", message: "evaluator_id must be an evaluator's id (a UUID)" });
    ctx.set("Cache-Control", "no-store");
    ctx.body = { rules: (await listRules(sql, p.projectId, evaluatorId ? { evaluatorId } : {})).map(ruleJson) };
  });

  router.get("/api/evaluation-rules/:id", async (ctx) => {
    const p = await authorize(ctx);
    ctx.body = { rule: ruleJson(await ruleWithId(sql, p.projectId, ctx.params.id!)) };
  });

  router.patch("/api/evaluation-rules/:id", async (ctx) => {
    const p = await authorize(ctx);
    const body = (await readJsonBody(ctx, 4 * 1024)) as { enabled?: unknown } | null;
    if (typeof body?.enabled !== "boolean") throw new ValidationError({ field: "enabled", message: "enabled must be true or false" });
    await setRuleEnabled(deps.ports, p.projectId, ctx.params.id!, body.enabled);
    ctx.body = { rule: ruleJson(await ruleWithId(sql, p.projectId, ctx.params.id!)) };
  });

  router.delete("/api/evaluation-rules/:id", async (ctx) => {
    const p = await authorize(ctx);
    await deleteRule(deps.ports, p.projectId, ctx.params.id!);
    ctx.status = 204;
  });

  router.post("/api/evaluation-rules/:id/backfill", async (ctx) => {
    const p = await authorize(ctx);
    const rule = await ruleWithId(sql, p.projectId, ctx.params.id!);
    if (rule.target !== "run") throw new ValidationError({ field: "target", message: "a backfill applies run rules; this rule judges spans" });
    const body = (await readJsonBody(ctx, 4 * 1024)) as Record<string, unknown> | null;
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new ValidationError({ message: 'the body must be a JSON object like {"from": "…", "to": "…", "confirm": true}' });
    const range = parseRange(body);
    const { matching, sample } = await backfillRuns(clickhouse, rule, range);
    const evaluator = (await findEvaluator(sql, p.projectId, rule.evaluator_id))!;
    const estimate = { from: range.from, to: range.to, matching_runs: matching, sampled_runs: sample.length, ...(await estimateCost(deps, evaluator, sample.length)) };
    if (body.confirm !== true) {
      ctx.body = { estimate };
      return;
    }
    const queued = await queueBackfill(sql, rule, sample);
    await deps.ports.pubsub.publish(EVALUATION_JOBS_CHANNEL, String(queued));
    ctx.status = 202;
    ctx.body = { queued, estimate };
  });
}

/**
 * Online evaluation rules API (Bearer key with scope read+ingest; docs/EVALUATION.md, Online rules):
 *
 *   POST   /api/evaluation-rules {evaluator_id, target, filter?, sampling, delay_s?, name?, queue_action?} → 201 {rule}
 *   GET    /api/evaluation-rules?evaluator_id&queue_id → {rules: [...]} (of one evaluator; adding to one queue)
 *   GET    /api/evaluation-rules/{id}                  → {rule}
 *   PATCH  /api/evaluation-rules/{id} {enabled}        → {rule}
 *   DELETE /api/evaluation-rules/{id}                  → 204
 *   POST   /api/evaluation-rules/{id}/backfill {from, to, confirm?}
 *          without confirm: 200 {estimate: {matching_runs, sampled_runs, estimated_cost_usd, basis}}
 *          with confirm: true: 202 {queued, estimate}
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { ValidationError } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import { listRules, ruleJson, ruleWithId } from "../../stores/evaluation/rules.js";
import type { WebDeps } from "../deps.js";
import { readJsonBody } from "../json-body.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { keyPrincipalOf, readAuthorizer, stringParam } from "../api/read-api.js";
import { backfill, createRule, deleteRule, parseRange, setRuleEnabled } from "../../evaluation/index.js";
import { mountApi } from "../route-table.js";

export function registerEvaluationRulesApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  const authorize = readAuthorizer(deps, auth);
  mountApi(router, deps, authorize, {
    edit_evaluators: {
      "POST /api/evaluation-rules": postRule,
      "PATCH /api/evaluation-rules/:id": patchRule,
      "DELETE /api/evaluation-rules/:id": removeRule,
      "POST /api/evaluation-rules/:id/backfill": postBackfill,
    },
    read: { "GET /api/evaluation-rules": getRules, "GET /api/evaluation-rules/:id": getRule },
  });
}

async function postRule(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const rule = await createRule(deps.ports, p.projectId, p.userId, await readJsonBody(ctx, 64 * 1024));
  ctx.status = 201;
  ctx.body = { rule: ruleJson(rule) };
}

async function getRules(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const evaluatorId = stringParam(ctx, "evaluator_id");
  if (evaluatorId !== undefined && !isUuid(evaluatorId)) throw new ValidationError({ field: "evaluator_id", message: "evaluator_id must be an evaluator's id (a UUID)" });
  const queueId = stringParam(ctx, "queue_id");
  if (queueId !== undefined && !isUuid(queueId)) throw new ValidationError({ field: "queue_id", message: "queue_id must be an annotation queue's id (a UUID)" });
  ctx.set("Cache-Control", "no-store");
  const rules = await listRules(deps.ports.sql, p.projectId, { ...(evaluatorId ? { evaluatorId } : {}), ...(queueId ? { queueId: queueId.toLowerCase() } : {}) });
  ctx.body = { rules: rules.map(ruleJson) };
}

async function getRule(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  ctx.body = { rule: ruleJson(await ruleWithId(deps.ports.sql, p.projectId, ctx.params.id!)) };
}

async function patchRule(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const body = (await readJsonBody(ctx, 4 * 1024)) as { enabled?: unknown } | null;
  if (typeof body?.enabled !== "boolean") throw new ValidationError({ field: "enabled", message: "enabled must be true or false" });
  await setRuleEnabled(deps.ports, p.projectId, ctx.params.id!, body.enabled, p.userId);
  ctx.body = { rule: ruleJson(await ruleWithId(deps.ports.sql, p.projectId, ctx.params.id!)) };
}

async function removeRule(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  await deleteRule(deps.ports, p.projectId, ctx.params.id!, p.userId);
  ctx.status = 204;
}

/** POST /api/evaluation-rules/:id/backfill: the estimate (200), or with confirm the runs queued (202). */
async function postBackfill(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const rule = await ruleWithId(deps.ports.sql, p.projectId, ctx.params.id!);
  const body = (await readJsonBody(ctx, 4 * 1024)) as Record<string, unknown> | null;
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new ValidationError({ message: 'the body must be a JSON object like {"from": "…", "to": "…", "confirm": true}' });
  const started = await backfill(deps, rule, parseRange(body), body.confirm === true, p.userId);
  if (started.queued !== undefined) ctx.status = 202;
  ctx.body = started;
}

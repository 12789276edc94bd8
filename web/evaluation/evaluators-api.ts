/**
 * Evaluators API (Bearer key with scope read+ingest, the read API's rate-limit bucket; docs/EVALUATION.md):
 *
 *   GET  /api/evaluator-templates                     → {templates: [5 ready LLM-judge evaluators]}
 *   POST /api/evaluators {name, type, ...}            → 201 {evaluator: {id, name, version, ...}}; 409 evaluator_exists
 *   GET  /api/evaluators                              → {evaluators: [...]}
 *   GET  /api/evaluators/{id}?version=N               → {evaluator, versions: [...], rules: [...], totals}
 *   PATCH /api/evaluators/{id} {prompt?, output?, ...} → {evaluator} at a new version
 *   POST /api/evaluators/{id}/try {sdk_run_id, span_id?} | {dataset, item_id, output?}, and draft?: a change to try
 *                                                     before saving it → {prompt, raw_answer, score, error, cost_usd, ...};
 *                                                     stores nothing
 *   GET  /api/evaluation-settings, PUT {daily_budget_usd, calls_per_minute} → the project's caps (at most the
 *                                                     instance's: 422 naming the field and the ceiling above it)
 *
 * Rules and backfill: web/evaluation/rules-api.ts. Another project's id is a 404 like one that does not exist.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { NotFound, ValidationError } from "../../core/errors.js";
import { MAX_POSTGRES_INTEGER } from "../../core/ports/sql.js";
import { evaluatorJson, evaluatorVersions, findEvaluator, listEvaluators } from "../../stores/evaluation/evaluators.js";
import { jobTotals } from "../../stores/evaluation/jobs.js";
import { listRules, ruleJson } from "../../stores/evaluation/rules.js";
import { evaluationLimits, setEvaluationLimits } from "../../stores/evaluation/spend.js";
import type { WebDeps } from "../deps.js";
import { readJsonBody } from "../json-body.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { intParam, keyPrincipalOf, readAuthorizer } from "../api/read-api.js";
import * as evaluation from "../../evaluation/index.js";
import { mountApi } from "../route-table.js";

const BODY_LIMIT = 256 * 1024;

const draftOf = (e: Parameters<typeof evaluation.changedDefinition>[0], draft: unknown) => {
  try {
    return evaluation.changedDefinition(e, draft).definition;
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    throw new ValidationError({ field: `draft${err.field ? `.${err.field}` : ""}`, message: `draft: ${err.message}` });
  }
};

const objectBody = (b: unknown): Record<string, unknown> => {
  if (typeof b !== "object" || b === null || Array.isArray(b)) throw new ValidationError({ message: "the body must be a JSON object" });
  return b as Record<string, unknown>;
};

export function registerEvaluatorsApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  const authorize = readAuthorizer(deps, auth);
  mountApi(router, deps, authorize, {
    read: {
      "GET /api/evaluator-templates": (ctx) => getTemplates(ctx),
      "GET /api/evaluators": getEvaluators,
      "GET /api/evaluators/:id": getEvaluator,
      "GET /api/evaluation-settings": getSettings,
    },
    edit_evaluators: {
      "POST /api/evaluators": createEvaluator,
      "PATCH /api/evaluators/:id": updateEvaluator,
      "POST /api/evaluators/:id/try": tryEvaluator,
    },
    manage_settings: { "PUT /api/evaluation-settings": putSettings },
  });
}

function getTemplates(ctx: Context): void {
  ctx.body = { templates: evaluation.JUDGE_TEMPLATES };
}

async function createEvaluator(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const e = await evaluation.createEvaluator(deps.ports.sql, p.projectId, p.userId, await readJsonBody(ctx, BODY_LIMIT));
  ctx.status = 201;
  ctx.body = { evaluator: evaluatorJson(e) };
}

async function getEvaluators(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  ctx.set("Cache-Control", "no-store");
  ctx.body = { evaluators: (await listEvaluators(deps.ports.sql, p.projectId)).map(evaluatorJson) };
}

async function getEvaluator(ctx: Context, deps: WebDeps): Promise<void> {
  const { sql } = deps.ports;
  const p = keyPrincipalOf(ctx);
  const e = await evaluatorOf(deps, p.projectId, ctx.params.id!, intParam(ctx, "version", 1, MAX_POSTGRES_INTEGER));
  const [versions, rules, totals] = await Promise.all([evaluatorVersions(sql, e.id), listRules(sql, p.projectId, { evaluatorId: e.id }), jobTotals(sql, p.projectId, [e.id])]);
  ctx.set("Cache-Control", "no-store");
  ctx.body = { evaluator: evaluatorJson(e), versions, rules: rules.map(ruleJson), totals: totals.get(e.id) };
}

async function updateEvaluator(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const e = await evaluation.updateEvaluator(deps.ports.sql, p.projectId, ctx.params.id!, p.userId, await readJsonBody(ctx, BODY_LIMIT));
  ctx.body = { evaluator: evaluatorJson(e) };
}

async function tryEvaluator(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const body = objectBody(await readJsonBody(ctx, BODY_LIMIT));
  const e = await evaluatorOf(deps, p.projectId, ctx.params.id!, typeof body.version === "number" ? body.version : undefined);
  // A draft: the change a PATCH would save, tried first (refused with the same field names as the PATCH).
  const def = body.draft === undefined ? e.definition : draftOf(e, body.draft);
  const outcome = await evaluation.tryEvaluator(deps, p.projectId, def, evaluation.parseTryTarget(body));
  ctx.set("Cache-Control", "no-store");
  ctx.body = evaluation.tryJson(def, outcome);
}

async function getSettings(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  ctx.set("Cache-Control", "no-store");
  ctx.body = await evaluationLimits(deps.ports.sql, p.projectId, deps.ports.config.evaluationCaps);
}

async function putSettings(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  await setEvaluationLimits(deps.ports.sql, p.projectId, p.userId, await readJsonBody(ctx, 4 * 1024), deps.ports.config.evaluationCaps);
  ctx.body = await evaluationLimits(deps.ports.sql, p.projectId, deps.ports.config.evaluationCaps);
}

/** The evaluator with this id in the project, at a version when one is asked for (404 otherwise). */
async function evaluatorOf(deps: WebDeps, projectId: number, id: string, version?: number) {
  const e = await findEvaluator(deps.ports.sql, projectId, id, version);
  if (!e) throw new NotFound({ resource: "evaluator", message: `no evaluator ${JSON.stringify(id)}${version ? ` at version ${version}` : ""} in this project` });
  return e;
}

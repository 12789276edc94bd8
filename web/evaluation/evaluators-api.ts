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
import { NotFound, ValidationError } from "../../core/errors.js";
import { MAX_POSTGRES_INTEGER } from "../../core/ports/sql.js";
import { evaluatorJson, evaluatorVersions, findEvaluator, listEvaluators } from "../../stores/evaluation/evaluators.js";
import { jobTotals } from "../../stores/evaluation/jobs.js";
import { listRules, ruleJson } from "../../stores/evaluation/rules.js";
import { evaluationLimits, setEvaluationLimits } from "../../stores/evaluation/spend.js";
import type { WebDeps } from "../deps.js";
import { readJsonBody } from "../json-body.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { intParam, readAuthorizer } from "../api/read-api.js";
import { changedDefinition, createEvaluator, JUDGE_TEMPLATES, parseTryTarget, tryEvaluator, tryJson, updateEvaluator } from "../../evaluation/index.js";

const BODY_LIMIT = 256 * 1024;

const draftOf = (e: Parameters<typeof changedDefinition>[0], draft: unknown) => {
  try {
    return changedDefinition(e, draft).definition;
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
  const { sql } = deps.ports;
  const evaluatorOf = async (projectId: number, id: string, version?: number) => {
    const e = await findEvaluator(sql, projectId, id, version);
    if (!e) throw new NotFound({ resource: "evaluator", message: `no evaluator ${JSON.stringify(id)}${version ? ` at version ${version}` : ""} in this project` });
    return e;
  };

  router.get("/api/evaluator-templates", authorize.may("read"), async (ctx) => {
    await authorize(ctx);
    ctx.body = { templates: JUDGE_TEMPLATES };
  });

  router.post("/api/evaluators", authorize.may("edit_evaluators"), async (ctx) => {
    const p = await authorize(ctx);
    const e = await createEvaluator(sql, p.projectId, p.userId, await readJsonBody(ctx, BODY_LIMIT));
    ctx.status = 201;
    ctx.body = { evaluator: evaluatorJson(e) };
  });

  router.get("/api/evaluators", authorize.may("read"), async (ctx) => {
    const p = await authorize(ctx);
    ctx.set("Cache-Control", "no-store");
    ctx.body = { evaluators: (await listEvaluators(sql, p.projectId)).map(evaluatorJson) };
  });

  router.get("/api/evaluators/:id", authorize.may("read"), async (ctx) => {
    const p = await authorize(ctx);
    const e = await evaluatorOf(p.projectId, ctx.params.id!, intParam(ctx, "version", 1, MAX_POSTGRES_INTEGER));
    const [versions, rules, totals] = await Promise.all([evaluatorVersions(sql, e.id), listRules(sql, p.projectId, { evaluatorId: e.id }), jobTotals(sql, p.projectId, [e.id])]);
    ctx.set("Cache-Control", "no-store");
    ctx.body = { evaluator: evaluatorJson(e), versions, rules: rules.map(ruleJson), totals: totals.get(e.id) };
  });

  router.patch("/api/evaluators/:id", authorize.may("edit_evaluators"), async (ctx) => {
    const p = await authorize(ctx);
    const e = await updateEvaluator(sql, p.projectId, ctx.params.id!, p.userId, await readJsonBody(ctx, BODY_LIMIT));
    ctx.body = { evaluator: evaluatorJson(e) };
  });

  router.post("/api/evaluators/:id/try", authorize.may("edit_evaluators"), async (ctx) => {
    const p = await authorize(ctx);
    const body = objectBody(await readJsonBody(ctx, BODY_LIMIT));
    const e = await evaluatorOf(p.projectId, ctx.params.id!, typeof body.version === "number" ? body.version : undefined);
    // A draft: the change a PATCH would save, tried first (refused with the same field names as the PATCH).
    const def = body.draft === undefined ? e.definition : draftOf(e, body.draft);
    const outcome = await tryEvaluator(deps, p.projectId, def, parseTryTarget(body));
    ctx.set("Cache-Control", "no-store");
    ctx.body = tryJson(def, outcome);
  });

  router.get("/api/evaluation-settings", authorize.may("read"), async (ctx) => {
    const p = await authorize(ctx);
    ctx.set("Cache-Control", "no-store");
    ctx.body = await evaluationLimits(sql, p.projectId, deps.ports.config.evaluationCaps);
  });

  router.put("/api/evaluation-settings", authorize.may("manage_settings"), async (ctx) => {
    const p = await authorize(ctx);
    await setEvaluationLimits(sql, p.projectId, p.userId, await readJsonBody(ctx, 4 * 1024), deps.ports.config.evaluationCaps);
    ctx.body = await evaluationLimits(sql, p.projectId, deps.ports.config.evaluationCaps);
  });
}

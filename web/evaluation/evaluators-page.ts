/**
 * The dashboard's evaluators (docs/EVALUATION.md):
 *
 *   GET  /evaluators                        the project's evaluators (jobs, failures, cost) and a form for a new one,
 *                                           prefilled from a ready template (?template=correctness)
 *   POST /evaluators                        create one
 *   GET  /evaluators/:id                    its definition and versions, the playground, its rules, its latest jobs
 *   POST /evaluators/:id                    change it: a new version
 *   POST /evaluators/:id/try                the playground: the rendered prompt, the raw answer, the score, the cost
 *   POST /evaluators/:id/try-draft          the change form's draft tried on a run before it is saved
 *   POST /evaluators/:id/rules              a new online rule; /rules/:rule/toggle, /rules/:rule/delete
 *   POST /evaluators/:id/rules/:rule/backfill   the estimate, then (confirm) the jobs
 *
 * Reading needs `read`, changing `edit_evaluators` (core/access/roles.ts).
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { can } from "../../core/access/roles.js";
import { NotFound } from "../../core/errors.js";
import { listQueues } from "../../stores/evaluation/annotation-queues.js";
import { evaluatorVersions, findEvaluator, listEvaluators, type Evaluator } from "../../stores/evaluation/evaluators.js";
import { evaluatorJobs, jobTotals } from "../../stores/evaluation/jobs.js";
import { listRules, ruleWithId, type EvaluationRule } from "../../stores/evaluation/rules.js";
import { evaluationLimits } from "../../stores/evaluation/spend.js";
import { scoresWithIds } from "../../stores/scores.js";
import { projectOfRequest } from "../auth/project.js";
import type { SessionUser, WebDeps } from "../deps.js";
import { formAction, readForm, redirectAfterPost, type Refusal } from "../forms.js";
import { evaluatorBody, ruleBody } from "./evaluator-forms.js";
import { queryParam, renderFragment, renderPage } from "../common/render.js";
import * as evaluation from "../../evaluation/index.js";
import { mountPages } from "../route-table.js";

/** A datetime-local field ("2026-10-01T10:00") read as UTC; what does not parse is left for parseRange to refuse. */
const utc = (v: string | undefined): string => {
  const ms = v ? Date.parse(/[zZ]|[+-]\d\d:\d\d$/.test(v) ? v : `${v}Z`) : NaN;
  return Number.isFinite(ms) ? new Date(ms).toISOString() : (v ?? "");
};
const userOf = (ctx: Context) => (ctx.state.user as SessionUser).id;
/**
 * What the evaluator forms show by their fields: a refused value or a name taken, and a judge the playground may
 * not call (the operator's keys, the project's judge calls per minute), which the form says as a conflict (409).
 */
const REFUSES = ["ValidationError", "Conflict", "AuthError", "RateLimited"] as const;
const statusOn = (r: Refusal): number => (r.kind === "AuthError" || r.kind === "RateLimited" ? 409 : r.status);

export function registerEvaluatorsPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: { "GET /evaluators": evaluatorsPage, "GET /evaluators/:id": evaluatorPage },
    edit_evaluators: {
      "POST /evaluators": createEvaluator,
      "POST /evaluators/:id": updateEvaluator,
      "POST /evaluators/:id/try-draft": tryDraft,
      "POST /evaluators/:id/try": tryEvaluator,
      "POST /evaluators/:id/rules": createRule,
      "POST /evaluators/:id/rules/:rule/toggle": toggleRule,
      "POST /evaluators/:id/rules/:rule/delete": deleteRule,
      "POST /evaluators/:id/rules/:rule/backfill": backfillRule,
    },
  });
}

async function evaluatorsPage(ctx: Context, deps: WebDeps, extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const { sql } = deps.ports;
  const projectId = projectOfRequest(ctx).id;
  const list = await listEvaluators(sql, projectId);
  const totals = await jobTotals(sql, projectId, list.map((e) => e.id));
  const evaluators = list.map((e) => ({ ...e, output_text: evaluation.describeOutput(e.definition.output), totals: totals.get(e.id) }));
  const template = evaluation.JUDGE_TEMPLATES.find((t) => t.id === queryParam(ctx, "template"));
  const values = template
    ? { name: template.name, type: "llm_judge", prompt: template.prompt, output_type: template.output.type, description: template.description,
        ...(template.output.type === "numeric" ? { output_min: template.output.min, output_max: template.output.max } : {}),
        ...(template.output.type === "categorical" ? { output_categories: template.output.categories.join(", ") } : {}) }
    : { type: "llm_judge", output_type: "numeric", output_min: 0, output_max: 1 };
  renderPage(ctx, "evaluators.njk", {
    title: "Evaluators", evaluators, templates: evaluation.JUDGE_TEMPLATES, values, errors: {}, open_form: Boolean(template),
    limits: await evaluationLimits(sql, projectId, deps.ports.config.evaluationCaps), can_edit: can(projectOfRequest(ctx).role, "edit_evaluators"), flash: queryParam(ctx, "flash"), ...extra,
  }, status);
}

async function createEvaluator(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  await formAction({
    refuses: REFUSES,
    field: "name",
    run: async () => {
      const e = await evaluation.createEvaluator(deps.ports.sql, projectOfRequest(ctx).id, userOf(ctx), evaluatorBody(form));
      redirectAfterPost(ctx, `/evaluators/${e.id}`, `Created ${e.name}. Try it on a run, then add a rule to judge production runs.`);
    },
    refused: (r) => evaluatorsPage(ctx, deps, { values: form, errors: { [r.field]: r.message }, open_form: true }, statusOn(r)),
  });
}

async function evaluatorPage(ctx: Context, deps: WebDeps, extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const { sql, clickhouse } = deps.ports;
  const project = projectOfRequest(ctx);
  const e = await evaluatorOf(ctx, deps);
  const [versions, rules, jobs, queues] = await Promise.all([
    evaluatorVersions(sql, e.id), listRules(sql, project.id, { evaluatorId: e.id }), evaluatorJobs(sql, project.id, e.id, 50), listQueues(sql, project.id),
  ]);
  const def = e.definition;
  const scored = await scoresWithIds(clickhouse, project.id, jobs.jobs.filter((j) => j.status === "done").map((j) => j.score_id));
  const rows = jobs.jobs.map((j) => ({ ...j, score: scored.get(j.score_id) ?? null }));
  if (queryParam(ctx, "fragment") === "jobs") return renderFragment(ctx, "_evaluator_jobs.njk", { evaluator: e, jobs: rows, totals: jobs.totals });
  renderPage(ctx, "evaluator.njk", {
    title: `Evaluator ${e.name}`, evaluator: e, def, output_text: evaluation.describeOutput(def.output), versions, rules, jobs: rows, totals: jobs.totals, queues,
    can_edit: can(project.role, "edit_evaluators"), flash: queryParam(ctx, "flash"), errors: {}, values: {}, try_values: { sdk_run_id: queryParam(ctx, "run") ?? "" },
    edit_values: {
      prompt: def.type === "llm_judge" ? def.prompt : "", check: def.type === "builtin" ? JSON.stringify(def.check) : "", provider: def.type === "llm_judge" ? def.provider ?? "" : "",
      model: def.type === "llm_judge" ? def.model ?? "" : "", output_type: def.output.type, output_min: def.output.type === "numeric" ? def.output.min : "",
      output_max: def.output.type === "numeric" ? def.output.max : "", output_categories: def.output.type === "categorical" ? def.output.categories.join(", ") : "",
    },
    ...extra,
  }, status);
}

async function updateEvaluator(ctx: Context, deps: WebDeps): Promise<void> {
  const e = await evaluatorOf(ctx, deps);
  const form = await readForm(ctx);
  await formAction({
    refuses: REFUSES,
    field: "prompt",
    run: async () => {
      const changed = await evaluation.updateEvaluator(deps.ports.sql, projectOfRequest(ctx).id, e.id, userOf(ctx), { ...evaluatorBody({ ...form, name: e.name, type: e.type }), name: undefined });
      redirectAfterPost(ctx, `/evaluators/${e.id}`, `Saved as version ${changed.version}. New jobs use it; scores name the version that gave them.`);
    },
    refused: (r) => evaluatorPage(ctx, deps, { edit_errors: { [r.field]: r.message }, edit_values: form, open_edit: true }, statusOn(r)),
  });
}

/** The change form's "Try on a run": the draft tried before it is saved as a new version. */
async function tryDraft(ctx: Context, deps: WebDeps): Promise<void> {
  const e = await evaluatorOf(ctx, deps);
  const form = await readForm(ctx);
  const page = (extra: Record<string, unknown>, status = 200) => evaluatorPage(ctx, deps, { edit_values: form, open_edit: true, ...extra }, status);
  await formAction({
    refuses: [...REFUSES, "NotFound"],
    field: "try_run",
    run: async () => {
      const { definition } = evaluation.changedDefinition(e, { ...evaluatorBody({ ...form, name: e.name, type: e.type }), name: undefined });
      const outcome = await evaluation.tryEvaluator(deps, projectOfRequest(ctx).id, definition, evaluation.parseTryTarget({ sdk_run_id: form.try_run }));
      await page({ tried: evaluation.tryJson(definition, outcome), tried_draft: true });
    },
    refused: (r) => page({ edit_errors: { [r.field]: r.message } }, statusOn(r)),
  });
}

/** The playground: the evaluator as saved, tried on a run (or a given output). */
async function tryEvaluator(ctx: Context, deps: WebDeps): Promise<void> {
  const e = await evaluatorOf(ctx, deps);
  const form = await readForm(ctx);
  await formAction({
    refuses: [...REFUSES, "NotFound"],
    field: "sdk_run_id",
    run: async () => {
      const target = evaluation.parseTryTarget({ ...form, ...(form.output ? { output: form.output } : {}) });
      const outcome = await evaluation.tryEvaluator(deps, projectOfRequest(ctx).id, e.definition, target);
      await evaluatorPage(ctx, deps, { tried: evaluation.tryJson(e.definition, outcome), try_values: form });
    },
    refused: (r) => evaluatorPage(ctx, deps, { try_errors: { [r.field]: r.message }, try_values: form }, statusOn(r)),
  });
}

async function createRule(ctx: Context, deps: WebDeps): Promise<void> {
  const e = await evaluatorOf(ctx, deps);
  const form = await readForm(ctx);
  await formAction({
    refuses: REFUSES,
    field: "sampling",
    run: async () => {
      const rule = await evaluation.createRule(deps.ports, projectOfRequest(ctx).id, userOf(ctx), ruleBody(e.id, form));
      redirectAfterPost(ctx, `/evaluators/${e.id}`, `Rule “${rule.name}” is on: ${Math.round(rule.sampling * 1000) / 10}% of the matching runs will be judged as they end.`);
    },
    refused: (r) => evaluatorPage(ctx, deps, { rule_errors: { [r.field]: r.message }, rule_values: form, open_rule: true }, statusOn(r)),
  });
}

async function toggleRule(ctx: Context, deps: WebDeps): Promise<void> {
  const { e, rule } = await ruleOf(ctx, deps);
  await evaluation.setRuleEnabled(deps.ports, projectOfRequest(ctx).id, rule.id, !rule.enabled, userOf(ctx));
  redirectAfterPost(ctx, `/evaluators/${e.id}`, `Rule “${rule.name}” is ${rule.enabled ? "off" : "on"}.`);
}

async function deleteRule(ctx: Context, deps: WebDeps): Promise<void> {
  const { e, rule } = await ruleOf(ctx, deps);
  await evaluation.deleteRule(deps.ports, projectOfRequest(ctx).id, rule.id, userOf(ctx));
  redirectAfterPost(ctx, `/evaluators/${e.id}`, `Deleted rule “${rule.name}” and its waiting jobs.`);
}

/** The estimate of a backfill's runs and cost; with `confirm=yes`, its jobs. */
async function backfillRule(ctx: Context, deps: WebDeps): Promise<void> {
  const { e, rule } = await ruleOf(ctx, deps);
  const form = await readForm(ctx);
  await formAction({
    refuses: REFUSES,
    run: async () => {
      const range = evaluation.parseRange({ from: utc(form.from), to: utc(form.to) });
      const { estimate, queued } = await evaluation.backfill(deps, rule, range, form.confirm === "yes", userOf(ctx));
      if (queued === undefined) return evaluatorPage(ctx, deps, { backfill: { rule, estimate, values: form } });
      redirectAfterPost(ctx, `/evaluators/${e.id}`, `Backfill of “${rule.name}” started: ${queued} ${rule.target === "span" ? "spans" : "runs"} queued for judging.`);
    },
    refused: (r) => evaluatorPage(ctx, deps, { backfill: { rule, values: form, error: r.message } }, statusOn(r)),
  });
}

/** The evaluator the URL names, in the request's project (404 otherwise). */
async function evaluatorOf(ctx: Context, deps: WebDeps): Promise<Evaluator> {
  const e = await findEvaluator(deps.ports.sql, projectOfRequest(ctx).id, String(ctx.params.id));
  if (!e) throw new NotFound({ resource: "evaluator", message: "no such evaluator in this project" });
  return e;
}

/** The evaluator and the rule the URL names, both in the request's project. */
async function ruleOf(ctx: Context, deps: WebDeps): Promise<{ e: Evaluator; rule: EvaluationRule }> {
  const e = await evaluatorOf(ctx, deps);
  const rule = await ruleWithId(deps.ports.sql, projectOfRequest(ctx).id, String(ctx.params.rule));
  return { e, rule };
}

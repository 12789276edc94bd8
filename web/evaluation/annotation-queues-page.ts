/**
 * The dashboard's annotation queues (docs/EVALUATION.md, Annotation queues):
 *
 *   GET  /queues                                 the project's queues and their progress; a form for a new one
 *   POST /queues                                 create one (edit_evaluators)
 *   GET  /queues/:id                             progress per reviewer, the items, "Review next"
 *   POST /queues/:id/rules                       fill the queue automatically: runs with errors, thumbs down, a score
 *                                                below a threshold, or every run (a rule without an evaluator)
 *   POST /queues/:id/rules/:rule/toggle|delete   turn such a rule off or on, or delete it (edit_evaluators)
 *   POST /queues/:id/delete                      delete the queue, its items and the rules that fill it (edit_evaluators)
 *
 * Reviewing a queue's items, and adding runs to it: web/evaluation/annotation-review-page.ts.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { can } from "../../core/access/roles.js";
import { NotFound, ValidationError } from "../../core/errors.js";
import { listItems, queueProgress, queuesProgress } from "../../stores/evaluation/annotation-queue-items.js";
import { listQueues, queueWithId, type AnnotationQueue } from "../../stores/evaluation/annotation-queues.js";
import { listRules, ruleWithId } from "../../stores/evaluation/rules.js";
import { projectOfRequest } from "../auth/project.js";
import type { SessionUser, WebDeps } from "../deps.js";
import { formAction, readForm, redirectAfterPost } from "../forms.js";
import { ROUTING_WHEN, routingRuleBody } from "./evaluator-forms.js";
import { queryParam, renderPage } from "../common/render.js";
import * as evaluation from "../../evaluation/index.js";
import { mountPages } from "../route-table.js";

export function registerAnnotationQueuesPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: { "GET /queues": queuesPage, "GET /queues/:id": queuePage },
    edit_evaluators: {
      "POST /queues": createQueue,
      "POST /queues/:id/rules": createRoutingRule,
      "POST /queues/:id/rules/:rule/toggle": toggleRoutingRule,
      "POST /queues/:id/rules/:rule/delete": deleteRoutingRule,
      "POST /queues/:id/delete": deleteQueue,
    },
  });
}

export const userOf = (ctx: Context): number => (ctx.state.user as SessionUser).id;

/** The queue the URL names, in the request's project (404 otherwise). */
export const queueOf = (ctx: Context, deps: WebDeps): Promise<AnnotationQueue> => queueWithId(deps.ports.sql, projectOfRequest(ctx).id, String(ctx.params.id));

async function queuesPage(ctx: Context, deps: WebDeps, extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const { sql } = deps.ports;
  const list = await listQueues(sql, projectOfRequest(ctx).id);
  const progress = await queuesProgress(sql, list.map((q) => q.id));
  const queues = list.map((q) => ({ ...q, progress: progress.get(q.id) }));
  renderPage(ctx, "annotation-queues.njk", {
    title: "Annotation queues", queues, can_edit: can(projectOfRequest(ctx).role, "edit_evaluators"), flash: queryParam(ctx, "flash"), errors: {},
    values: { score_configs: '[{"name": "correct", "type": "boolean", "description": "Is the answer right?"},\n {"name": "quality", "type": "numeric", "min": 1, "max": 5}]' },
    ...extra,
  }, status);
}

async function createQueue(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  await formAction({
    refuses: ["ValidationError", "Conflict"],
    field: "name",
    run: async () => {
      const q = await evaluation.createQueue(deps.ports.sql, projectOfRequest(ctx).id, queueBody(form));
      redirectAfterPost(ctx, `/queues/${q.id}`, `Created ${q.name}. Add runs from their page, the API, or a rule's “add to queue”.`);
    },
    refused: (r) => queuesPage(ctx, deps, { values: form, errors: { [r.field]: r.message }, open_form: true }, r.status),
  });
}

async function queuePage(ctx: Context, deps: WebDeps, extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const { sql } = deps.ports;
  const q = await queueOf(ctx, deps);
  const project = projectOfRequest(ctx);
  const [progress, pending, done, rules] = await Promise.all([
    queueProgress(sql, q.id), listItems(sql, q.id, "pending", 50), listItems(sql, q.id, "completed", 20), listRules(sql, project.id, { queueId: q.id }),
  ]);
  renderPage(ctx, "annotation-queue.njk", {
    title: `Queue ${q.name}`, queue: q, progress, pending, done, rules, flash: queryParam(ctx, "flash"),
    can_review: can(project.role, "review") && evaluation.mayReview(q, userOf(ctx)), can_edit: can(project.role, "edit_evaluators"),
    when_choices: ROUTING_WHEN, rule_errors: {}, rule_values: { when: "error", sampling_pct: "100" }, ...extra,
  }, status);
}

async function createRoutingRule(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  const q = await queueOf(ctx, deps);
  await formAction({
    refuses: ["ValidationError", "Conflict"],
    field: "when",
    run: async () => {
      const rule = await evaluation.createRule(deps.ports, projectOfRequest(ctx).id, userOf(ctx), routingRuleBody(q.id, form));
      redirectAfterPost(ctx, `/queues/${q.id}`, `Rule “${rule.name}” is on: matching runs are added as it happens.`);
    },
    refused: (r) => queuePage(ctx, deps, { rule_errors: { [r.field]: r.message }, rule_values: form, open_rule: true }, r.status),
  });
}

async function toggleRoutingRule(ctx: Context, deps: WebDeps): Promise<void> {
  await readForm(ctx);
  const q = await queueOf(ctx, deps);
  const rule = await routingRuleOf(ctx, deps, q);
  await evaluation.setRuleEnabled(deps.ports, q.project_id, rule.id, !rule.enabled, userOf(ctx));
  redirectAfterPost(ctx, `/queues/${q.id}`, `Rule “${rule.name}” is ${rule.enabled ? "off" : "on"}.`);
}

async function deleteRoutingRule(ctx: Context, deps: WebDeps): Promise<void> {
  await readForm(ctx);
  const q = await queueOf(ctx, deps);
  const rule = await routingRuleOf(ctx, deps, q);
  await evaluation.deleteRule(deps.ports, q.project_id, rule.id, userOf(ctx));
  redirectAfterPost(ctx, `/queues/${q.id}`, `Deleted rule “${rule.name}”.`);
}

async function deleteQueue(ctx: Context, deps: WebDeps): Promise<void> {
  await readForm(ctx);
  const q = await evaluation.deleteQueue(deps.ports, projectOfRequest(ctx).id, String(ctx.params.id), userOf(ctx));
  redirectAfterPost(ctx, "/queues", `Deleted ${q.name}. The scores its reviewers gave stay on their runs.`);
}

/** One of the rules that fill this queue (a judging rule is changed on its evaluator's page). */
async function routingRuleOf(ctx: Context, deps: WebDeps, q: AnnotationQueue) {
  const rule = await ruleWithId(deps.ports.sql, q.project_id, String(ctx.params.rule));
  if (rule.evaluator_id !== null || rule.queue_action?.queue_id !== q.id) throw new NotFound({ resource: "rule", message: `no rule ${JSON.stringify(ctx.params.rule)} fills ${q.name}` });
  return rule;
}

/** A new-queue form as a POST /api/annotation-queues body. */
function queueBody(form: Record<string, string>): Record<string, unknown> {
  let configs: unknown = form.score_configs;
  try {
    configs = JSON.parse(form.score_configs ?? "");
  } catch {
    throw new ValidationError({ field: "score_configs", message: 'score_configs must be JSON like [{"name": "correct", "type": "boolean"}]' });
  }
  const members = (form.members ?? "").split(/[\s,]+/).filter(Boolean);
  return { name: form.name, description: form.description, score_configs: configs, ...(members.length ? { members } : {}) };
}

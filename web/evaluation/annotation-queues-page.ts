/**
 * The dashboard's annotation queues (docs/EVALUATION.md, Annotation queues):
 *
 *   GET  /queues                                 the project's queues and their progress; a form for a new one
 *   POST /queues                                 create one (edit_evaluators)
 *   GET  /queues/:id                             progress per reviewer, the items, "Review next"
 *   POST /queues/:id/next                        take the next item (locked to you for 30 minutes) and open it
 *   GET  /queues/:id/items/:item                 the item to review: the run's input, output (or its error: type,
 *                                                message, the failing span), scores, its trace
 *   POST /queues/:id/items/:item/complete        score it with the queue's configs, comment, and optionally add it to a
 *                                                dataset with a corrected expected output; then the next item
 *   POST /queues/:id/items/:item/skip            skip it; then the next item
 *   POST /queues/add-run                         a run page's "Add to queue" (sdk_run_id, queue_id)
 *   POST /queues/add-runs                        the dashboard's selected runs (sdk_run_id, repeated; queue_id)
 *   POST /queues/:id/rules                       fill the queue automatically: runs with errors, thumbs down, a score
 *                                                below a threshold, or every run (a rule without an evaluator)
 *   POST /queues/:id/rules/:rule/toggle|delete   turn such a rule off or on, or delete it (edit_evaluators)
 *   POST /queues/:id/delete                      delete the queue, its items and the rules that fill it (edit_evaluators)
 *
 * Reviewing needs `review`; a queue with members takes its members only.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { can } from "../../core/access/roles.js";
import { AuthError, NotFound, ValidationError } from "../../core/errors.js";
import { runInputOutput } from "../../core/events/run-io.js";
import { readRunError } from "../../core/events/run-error.js";
import { findItem, listItems, nextItem, queueProgress, queuesProgress, skipItem } from "../../stores/evaluation/annotation-queue-items.js";
import { listQueues, queueWithId, type AnnotationQueue, type ScoreConfig } from "../../stores/evaluation/annotation-queues.js";
import { listDatasets } from "../../stores/datasets/datasets.js";
import { listRunScores } from "../../stores/scores.js";
import { inProject, projectOfRequest } from "../auth/project.js";
import { requireUser } from "../auth/session.js";
import type { SessionUser, WebDeps } from "../deps.js";
import { formAction, readForm, selectedRunIds } from "../forms.js";
import { listRules, ruleWithId } from "../../stores/evaluation/rules.js";
import { ROUTING_WHEN, routingRuleBody } from "./evaluator-forms.js";
import { queryParam, renderPage } from "../common/render.js";
import { addRunsToQueue, completeReview, createQueue, createRule, deleteQueue, deleteRule, mayReview, setRuleEnabled } from "../../evaluation/index.js";

const userOf = (ctx: Context) => (ctx.state.user as SessionUser).id;

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

/** A review form's scores: one field per score config (`score.<name>`); an empty field gives no score. */
function reviewBody(q: AnnotationQueue, form: Record<string, string>): Record<string, unknown> {
  const value = (c: ScoreConfig, raw: string): unknown => (c.type === "numeric" ? Number(raw) : c.type === "boolean" ? raw === "true" : raw);
  const scores = q.score_configs.flatMap((c) => {
    const raw = form[`score.${c.name}`];
    return raw === undefined || raw === "" ? [] : [{ name: c.name, value: value(c, raw) }];
  });
  let add: Record<string, unknown> | undefined;
  if (form.dataset) {
    let expected: unknown = form.expected_output;
    try {
      expected = form.expected_output ? JSON.parse(form.expected_output) : undefined;
    } catch {
      // Not JSON: the corrected answer as text.
    }
    add = { dataset: form.dataset, ...(expected !== undefined ? { expected_output: expected } : {}) };
  }
  return { scores, comment: form.comment ?? "", ...(add ? { add_to_dataset: add } : {}) };
}

export function registerAnnotationQueuesPage(router: Router, deps: WebDeps): void {
  const { sql, clickhouse } = deps.ports;
  const queueOf = (ctx: Context) => queueWithId(sql, projectOfRequest(ctx).id, String(ctx.params.id));
  const reviewer = (ctx: Context, q: AnnotationQueue) => {
    if (!mayReview(q, userOf(ctx))) throw new AuthError({ code: "forbidden", message: `${q.name} takes reviews from its members only` });
  };
  const go = (ctx: Context, path: string, flash?: string) => {
    ctx.status = 303;
    ctx.redirect(flash ? `${path}?flash=${encodeURIComponent(flash)}` : path);
  };

  const listPage = async (ctx: Context, extra: Record<string, unknown> = {}, status = 200) => {
    const list = await listQueues(sql, projectOfRequest(ctx).id);
    const progress = await queuesProgress(sql, list.map((q) => q.id));
    const queues = list.map((q) => ({ ...q, progress: progress.get(q.id) }));
    renderPage(ctx, "annotation-queues.njk", {
      title: "Annotation queues", queues, can_edit: can(projectOfRequest(ctx).role, "edit_evaluators"), flash: queryParam(ctx, "flash"), errors: {},
      values: { score_configs: '[{"name": "correct", "type": "boolean", "description": "Is the answer right?"},\n {"name": "quality", "type": "numeric", "min": 1, "max": 5}]' },
      ...extra,
    }, status);
  };
  router.get("/queues", requireUser, inProject(deps, "read"), (ctx: Context) => listPage(ctx));

  router.post("/queues", requireUser, inProject(deps, "edit_evaluators"), async (ctx: Context) => {
    const form = await readForm(ctx);
    await formAction({
      refuses: ["ValidationError", "Conflict"],
      field: "name",
      run: async () => {
        const q = await createQueue(sql, projectOfRequest(ctx).id, queueBody(form));
        go(ctx, `/queues/${q.id}`, `Created ${q.name}. Add runs from their page, the API, or a rule's “add to queue”.`);
      },
      refused: (r) => listPage(ctx, { values: form, errors: { [r.field]: r.message }, open_form: true }, r.status),
    });
  });

  const queuePage = async (ctx: Context, extra: Record<string, unknown> = {}, status = 200) => {
    const q = await queueOf(ctx);
    const project = projectOfRequest(ctx);
    const [progress, pending, done, rules] = await Promise.all([
      queueProgress(sql, q.id), listItems(sql, q.id, "pending", 50), listItems(sql, q.id, "completed", 20), listRules(sql, project.id, { queueId: q.id }),
    ]);
    renderPage(ctx, "annotation-queue.njk", {
      title: `Queue ${q.name}`, queue: q, progress, pending, done, rules, flash: queryParam(ctx, "flash"),
      can_review: can(project.role, "review") && mayReview(q, userOf(ctx)), can_edit: can(project.role, "edit_evaluators"),
      when_choices: ROUTING_WHEN, rule_errors: {}, rule_values: { when: "error", sampling_pct: "100" }, ...extra,
    }, status);
  };
  router.get("/queues/:id", requireUser, inProject(deps, "read"), (ctx: Context) => queuePage(ctx));

  router.post("/queues/:id/rules", requireUser, inProject(deps, "edit_evaluators"), async (ctx: Context) => {
    const form = await readForm(ctx);
    const q = await queueOf(ctx);
    await formAction({
      refuses: ["ValidationError", "Conflict"],
      field: "when",
      run: async () => {
        const rule = await createRule(deps.ports, projectOfRequest(ctx).id, userOf(ctx), routingRuleBody(q.id, form));
        go(ctx, `/queues/${q.id}`, `Rule “${rule.name}” is on: matching runs are added as it happens.`);
      },
      refused: (r) => queuePage(ctx, { rule_errors: { [r.field]: r.message }, rule_values: form, open_rule: true }, r.status),
    });
  });

  /** One of the rules that fill this queue (a judging rule is changed on its evaluator's page). */
  const routingRuleOf = async (ctx: Context, q: AnnotationQueue) => {
    const rule = await ruleWithId(sql, q.project_id, String(ctx.params.rule));
    if (rule.evaluator_id !== null || rule.queue_action?.queue_id !== q.id) throw new NotFound({ resource: "rule", message: `no rule ${JSON.stringify(ctx.params.rule)} fills ${q.name}` });
    return rule;
  };
  router.post("/queues/:id/rules/:rule/toggle", requireUser, inProject(deps, "edit_evaluators"), async (ctx: Context) => {
    await readForm(ctx);
    const q = await queueOf(ctx);
    const rule = await routingRuleOf(ctx, q);
    await setRuleEnabled(deps.ports, q.project_id, rule.id, !rule.enabled, userOf(ctx));
    go(ctx, `/queues/${q.id}`, `Rule “${rule.name}” is ${rule.enabled ? "off" : "on"}.`);
  });
  router.post("/queues/:id/rules/:rule/delete", requireUser, inProject(deps, "edit_evaluators"), async (ctx: Context) => {
    await readForm(ctx);
    const q = await queueOf(ctx);
    const rule = await routingRuleOf(ctx, q);
    await deleteRule(deps.ports, q.project_id, rule.id, userOf(ctx));
    go(ctx, `/queues/${q.id}`, `Deleted rule “${rule.name}”.`);
  });

  router.post("/queues/:id/delete", requireUser, inProject(deps, "edit_evaluators"), async (ctx: Context) => {
    await readForm(ctx);
    const q = await deleteQueue(deps.ports, projectOfRequest(ctx).id, String(ctx.params.id), userOf(ctx));
    go(ctx, "/queues", `Deleted ${q.name}. The scores its reviewers gave stay on their runs.`);
  });

  const openNext = async (ctx: Context, q: AnnotationQueue, flash?: string) => {
    const item = await nextItem(sql, q, userOf(ctx));
    if (item) go(ctx, `/queues/${q.id}/items/${item.id}`, flash);
    else go(ctx, `/queues/${q.id}`, `${flash ? `${flash} ` : ""}Nothing left to review in ${q.name}.`);
  };

  router.post("/queues/:id/next", requireUser, inProject(deps, "review"), async (ctx: Context) => {
    await readForm(ctx);
    const q = await queueOf(ctx);
    reviewer(ctx, q);
    await openNext(ctx, q);
  });

  const itemPage = async (ctx: Context, extra: Record<string, unknown> = {}, status = 200) => {
    const q = await queueOf(ctx);
    reviewer(ctx, q);
    const projectId = projectOfRequest(ctx).id;
    const item = await findItem(sql, q, String(ctx.params.item));
    const run = await deps.events.getRun(projectId, item.sdk_run_id);
    const io = run ? runInputOutput(await deps.events.eventsOfTypes(projectId, run.run_id, ["run_start", "run_end"], 20)) : { input: undefined, output: undefined };
    const failed = run && (run.status === "error" || run.error_count > 0);
    const [scores, datasets, error] = await Promise.all([
      run ? listRunScores(clickhouse, projectId, run.run_id, { limit: 100 }) : { scores: [] }, listDatasets(sql, projectId),
      failed ? readRunError(deps.events, projectId, run.run_id) : undefined,
    ]);
    const held = item.locked_by === userOf(ctx) && item.locked_until !== null && Date.parse(item.locked_until) > Date.now();
    renderPage(ctx, "annotation-queue-item.njk", {
      title: `Review · ${q.name}`, queue: q, item, run, input: io.input, output: io.output, error, scores: scores.scores, datasets, held,
      flash: queryParam(ctx, "flash"), errors: {}, values: {}, ...extra,
    }, status);
  };
  router.get("/queues/:id/items/:item", requireUser, inProject(deps, "review"), (ctx: Context) => itemPage(ctx));

  router.post("/queues/:id/items/:item/complete", requireUser, inProject(deps, "review"), async (ctx: Context) => {
    const form = await readForm(ctx);
    const q = await queueOf(ctx);
    reviewer(ctx, q);
    await formAction({
      refuses: ["ValidationError", "Conflict", "NotFound"],
      field: "scores",
      run: async () => {
        const { dataset_item: added } = await completeReview(deps, q, String(ctx.params.item), userOf(ctx), reviewBody(q, form));
        await openNext(ctx, q, `Saved.${added ? ` Added to ${added.dataset} (version ${added.version}).` : ""}`);
      },
      refused: (r) => itemPage(ctx, { values: form, errors: { [r.field]: r.message } }, r.status),
    });
  });

  router.post("/queues/:id/items/:item/skip", requireUser, inProject(deps, "review"), async (ctx: Context) => {
    await readForm(ctx);
    const q = await queueOf(ctx);
    reviewer(ctx, q);
    const skipped = await formAction({
      refuses: ["Conflict"],
      run: () => skipItem(sql, q, String(ctx.params.item), userOf(ctx)),
      refused: (r) => itemPage(ctx, { errors: { scores: r.message } }, r.status),
    });
    if (skipped) await openNext(ctx, q, "Skipped.");
  });

  router.post("/queues/add-run", requireUser, inProject(deps, "review"), async (ctx: Context) => {
    const form = await readForm(ctx);
    const q = await queueWithId(sql, projectOfRequest(ctx).id, form.queue_id ?? "");
    const { added } = await addRunsToQueue({ sql, events: deps.events }, q, { items: [{ sdk_run_id: form.sdk_run_id, ...(form.span_id ? { span_id: form.span_id } : {}) }] }, "manual");
    go(ctx, `/dashboard/${encodeURIComponent(form.sdk_run_id ?? "")}`, added ? `Added to the queue ${q.name}.` : `Already in the queue ${q.name}.`);
  });

  router.post("/queues/add-runs", requireUser, inProject(deps, "review"), async (ctx: Context) => {
    const form = await readForm(ctx);
    const ids = selectedRunIds(ctx);
    const q = await queueWithId(sql, projectOfRequest(ctx).id, form.queue_id ?? "");
    const { added } = await addRunsToQueue({ sql, events: deps.events }, q, { items: ids.map((sdk_run_id) => ({ sdk_run_id })) }, "manual");
    go(ctx, `/queues/${q.id}`, `Added ${added} of the ${ids.length} selected run${ids.length === 1 ? "" : "s"}${added < ids.length ? " (the others were in the queue already)" : ""}.`);
  });
}

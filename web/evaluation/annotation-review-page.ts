/**
 * Reviewing an annotation queue's items on the dashboard, and adding runs to a queue (docs/EVALUATION.md, Annotation
 * queues):
 *
 *   POST /queues/:id/next                        take the next item (locked to you for 30 minutes) and open it
 *   GET  /queues/:id/items/:item                 the item to review: the run's input, output (or its error: type,
 *                                                message, the failing span), scores, its trace
 *   POST /queues/:id/items/:item/complete        score it with the queue's configs, comment, and optionally add it to a
 *                                                dataset with a corrected expected output; then the next item
 *   POST /queues/:id/items/:item/skip            skip it; then the next item
 *   POST /queues/add-run                         a run page's "Add to queue" (sdk_run_id, queue_id)
 *   POST /queues/add-runs                        the dashboard's selected runs (sdk_run_id, repeated; queue_id)
 *
 * Reviewing needs `review`; a queue with members takes its members only. The queues themselves:
 * web/evaluation/annotation-queues-page.ts.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { AuthError } from "../../core/errors.js";
import { runInputOutput } from "../../core/events/run-io.js";
import { readRunError } from "../../core/events/run-error.js";
import { findItem, nextItem, skipItem } from "../../stores/evaluation/annotation-queue-items.js";
import { queueWithId, type AnnotationQueue, type ScoreConfig } from "../../stores/evaluation/annotation-queues.js";
import { listDatasets } from "../../stores/datasets/datasets.js";
import { listRunScores } from "../../stores/scores.js";
import { projectOfRequest } from "../auth/project.js";
import type { WebDeps } from "../deps.js";
import { formAction, readForm, redirectAfterPost, selectedRunIds } from "../forms.js";
import { queryParam, renderPage } from "../common/render.js";
import { queueOf, userOf } from "./annotation-queues-page.js";
import * as evaluation from "../../evaluation/index.js";
import { mountPages } from "../route-table.js";

export function registerAnnotationReviewPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    review: {
      "POST /queues/:id/next": reviewNext,
      "GET /queues/:id/items/:item": itemPage,
      "POST /queues/:id/items/:item/complete": completeReview,
      "POST /queues/:id/items/:item/skip": skipReview,
      "POST /queues/add-run": addRun,
      "POST /queues/add-runs": addSelectedRuns,
    },
  });
}

async function reviewNext(ctx: Context, deps: WebDeps): Promise<void> {
  await readForm(ctx);
  const q = await reviewedQueue(ctx, deps);
  await openNext(ctx, deps, q);
}

async function itemPage(ctx: Context, deps: WebDeps, extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const q = await reviewedQueue(ctx, deps);
  const projectId = projectOfRequest(ctx).id;
  const item = await findItem(deps.ports.sql, q, String(ctx.params.item));
  const run = await deps.events.getRun(projectId, item.sdk_run_id);
  const io = run ? runInputOutput(await deps.events.eventsOfTypes(projectId, run.run_id, ["run_start", "run_end"], 20)) : { input: undefined, output: undefined };
  const failed = run && (run.status === "error" || run.error_count > 0);
  const [scores, datasets, error] = await Promise.all([
    run ? listRunScores(deps.ports.clickhouse, projectId, run.run_id, { limit: 100 }) : { scores: [] }, listDatasets(deps.ports.sql, projectId),
    failed ? readRunError(deps.events, projectId, run.run_id) : undefined,
  ]);
  const held = item.locked_by === userOf(ctx) && item.locked_until !== null && Date.parse(item.locked_until) > Date.now();
  renderPage(ctx, "annotation-queue-item.njk", {
    title: `Review · ${q.name}`, queue: q, item, run, input: io.input, output: io.output, error, scores: scores.scores, datasets, held,
    flash: queryParam(ctx, "flash"), errors: {}, values: {}, ...extra,
  }, status);
}

async function completeReview(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  const q = await reviewedQueue(ctx, deps);
  await formAction({
    refuses: ["ValidationError", "Conflict", "NotFound"],
    field: "scores",
    run: async () => {
      const { dataset_item: added } = await evaluation.completeReview(deps, q, String(ctx.params.item), userOf(ctx), reviewBody(q, form));
      await openNext(ctx, deps, q, `Saved.${added ? ` Added to ${added.dataset} (version ${added.version}).` : ""}`);
    },
    refused: (r) => itemPage(ctx, deps, { values: form, errors: { [r.field]: r.message } }, r.status),
  });
}

async function skipReview(ctx: Context, deps: WebDeps): Promise<void> {
  await readForm(ctx);
  const q = await reviewedQueue(ctx, deps);
  const skipped = await formAction({
    refuses: ["Conflict"],
    run: () => skipItem(deps.ports.sql, q, String(ctx.params.item), userOf(ctx)),
    refused: (r) => itemPage(ctx, deps, { errors: { scores: r.message } }, r.status),
  });
  if (skipped) await openNext(ctx, deps, q, "Skipped.");
}

async function addRun(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  const q = await queueWithId(deps.ports.sql, projectOfRequest(ctx).id, form.queue_id ?? "");
  const item = { sdk_run_id: form.sdk_run_id, ...(form.span_id ? { span_id: form.span_id } : {}) };
  const { added } = await evaluation.addRunsToQueue({ sql: deps.ports.sql, events: deps.events }, q, { items: [item] }, "manual");
  redirectAfterPost(ctx, `/dashboard/${encodeURIComponent(form.sdk_run_id ?? "")}`, added ? `Added to the queue ${q.name}.` : `Already in the queue ${q.name}.`);
}

async function addSelectedRuns(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  const ids = selectedRunIds(ctx);
  const q = await queueWithId(deps.ports.sql, projectOfRequest(ctx).id, form.queue_id ?? "");
  const { added } = await evaluation.addRunsToQueue({ sql: deps.ports.sql, events: deps.events }, q, { items: ids.map((sdk_run_id) => ({ sdk_run_id })) }, "manual");
  redirectAfterPost(ctx, `/queues/${q.id}`, `Added ${added} of the ${ids.length} selected run${ids.length === 1 ? "" : "s"}${added < ids.length ? " (the others were in the queue already)" : ""}.`);
}

/** The queue the URL names, when the member may review it (403 otherwise). */
async function reviewedQueue(ctx: Context, deps: WebDeps): Promise<AnnotationQueue> {
  const q = await queueOf(ctx, deps);
  if (!evaluation.mayReview(q, userOf(ctx))) throw new AuthError({ code: "forbidden", message: `${q.name} takes reviews from its members only` });
  return q;
}

/** Opens the member's next item in the queue, or the queue's page when nothing is left. */
async function openNext(ctx: Context, deps: WebDeps, q: AnnotationQueue, flash?: string): Promise<void> {
  const item = await nextItem(deps.ports.sql, q, userOf(ctx));
  if (item) redirectAfterPost(ctx, `/queues/${q.id}/items/${item.id}`, flash);
  else redirectAfterPost(ctx, `/queues/${q.id}`, `${flash ? `${flash} ` : ""}Nothing left to review in ${q.name}.`);
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

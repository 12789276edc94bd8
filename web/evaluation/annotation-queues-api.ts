/**
 * Annotation queues API (Bearer key with scope read+ingest; the key's owner is the reviewer; docs/EVALUATION.md):
 *
 *   POST /api/annotation-queues {name, score_configs: [...], description?, members?: [emails]} → 201 {queue}
 *   GET  /api/annotation-queues                                   → {queues: [... with progress]}
 *   GET  /api/annotation-queues/{id}?status                       → {queue, progress, items: [...]}
 *   POST /api/annotation-queues/{id}/items {items: [{sdk_run_id, span_id?}]} → 201 {added}
 *   POST /api/annotation-queues/{id}/next                         → 200 {item} locked to the caller for 30 min; 204 none
 *   POST /api/annotation-queues/{id}/items/{item_id}/complete {scores: [{name, value, comment?}], comment?,
 *        add_to_dataset?: {dataset, expected_output}}            → {item, score_ids, dataset_item?}
 *   POST /api/annotation-queues/{id}/items/{item_id}/skip         → {item}
 *   DELETE /api/annotation-queues/{id}                            → 204; its items go, the rules that fill it are
 *        deleted (judging rules keep judging); the key's owner must be allowed to edit evaluators (403 otherwise)
 *
 * A queue with members takes reviews from its members only (403 forbidden for others).
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { AuthError, ValidationError } from "../../core/errors.js";
import { listItems, nextItem, queueProgress, queuesProgress, skipItem } from "../../stores/evaluation/annotation-queue-items.js";
import { listQueues, queueJson, queueWithId, type AnnotationQueue } from "../../stores/evaluation/annotation-queues.js";
import type { WebDeps } from "../deps.js";
import { readJsonBody } from "../json-body.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { keyPrincipalOf, readAuthorizer, stringParam } from "../api/read-api.js";
import * as evaluation from "../../evaluation/index.js";
import { mountApi } from "../route-table.js";

const STATUSES = new Set(["pending", "completed", "skipped"]);

export function registerAnnotationQueuesApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  const authorize = readAuthorizer(deps, auth);
  mountApi(router, deps, authorize, {
    edit_evaluators: { "POST /api/annotation-queues": createQueue, "DELETE /api/annotation-queues/:id": deleteQueue },
    read: { "GET /api/annotation-queues": getQueues, "GET /api/annotation-queues/:id": getQueue },
    review: {
      "POST /api/annotation-queues/:id/items": addItems,
      "POST /api/annotation-queues/:id/next": takeNextItem,
      "POST /api/annotation-queues/:id/items/:item_id/complete": completeQueueItem,
      "POST /api/annotation-queues/:id/items/:item_id/skip": skipQueueItem,
    },
  });
}

async function createQueue(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const q = await evaluation.createQueue(deps.ports.sql, p.projectId, await readJsonBody(ctx, 64 * 1024));
  ctx.status = 201;
  ctx.body = { queue: queueJson(q) };
}

async function getQueues(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const queues = await listQueues(deps.ports.sql, p.projectId);
  const progress = await queuesProgress(deps.ports.sql, queues.map((q) => q.id));
  ctx.set("Cache-Control", "no-store");
  ctx.body = { queues: queues.map((q) => ({ ...queueJson(q), progress: progress.get(q.id) })) };
}

async function deleteQueue(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  await evaluation.deleteQueue(deps.ports, p.projectId, ctx.params.id!, p.userId);
  ctx.status = 204;
}

async function getQueue(ctx: Context, deps: WebDeps): Promise<void> {
  const { sql } = deps.ports;
  const p = keyPrincipalOf(ctx);
  const q = await queueWithId(sql, p.projectId, ctx.params.id!);
  const status = stringParam(ctx, "status");
  if (status !== undefined && !STATUSES.has(status)) throw new ValidationError({ field: "status", message: "status must be pending, completed or skipped" });
  ctx.set("Cache-Control", "no-store");
  ctx.body = { queue: queueJson(q), progress: await queueProgress(sql, q.id), items: await listItems(sql, q.id, status as "pending" | undefined) };
}

async function addItems(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const q = await queueWithId(deps.ports.sql, p.projectId, ctx.params.id!);
  const added = await evaluation.addRunsToQueue({ sql: deps.ports.sql, events: deps.events }, q, await readJsonBody(ctx, 512 * 1024), "api");
  ctx.status = 201;
  ctx.body = added;
}

async function takeNextItem(ctx: Context, deps: WebDeps): Promise<void> {
  const { q, userId } = await reviewedQueue(ctx, deps);
  const item = await nextItem(deps.ports.sql, q, userId);
  ctx.set("Cache-Control", "no-store");
  if (!item) {
    ctx.status = 204;
    return;
  }
  ctx.body = { item };
}

async function completeQueueItem(ctx: Context, deps: WebDeps): Promise<void> {
  const { q, userId } = await reviewedQueue(ctx, deps);
  ctx.body = await evaluation.completeReview(deps, q, ctx.params.item_id!, userId, await readJsonBody(ctx, 1024 * 1024));
}

async function skipQueueItem(ctx: Context, deps: WebDeps): Promise<void> {
  const { q, userId } = await reviewedQueue(ctx, deps);
  ctx.body = { item: await skipItem(deps.ports.sql, q, ctx.params.item_id!, userId) };
}

/** The queue the URL names, when the key's owner may review it (403 otherwise), and that reviewer. */
async function reviewedQueue(ctx: Context, deps: WebDeps): Promise<{ q: AnnotationQueue; userId: number }> {
  const p = keyPrincipalOf(ctx);
  const q = await queueWithId(deps.ports.sql, p.projectId, ctx.params.id!);
  if (!evaluation.mayReview(q, p.userId)) throw new AuthError({ code: "forbidden", message: "this queue takes reviews from its members only" });
  return { q, userId: p.userId };
}

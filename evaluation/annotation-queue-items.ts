/**
 * Reviewing an annotation queue's items (docs/EVALUATION.md, Annotation queues): adding runs named by the API,
 * checking a reviewer's scores against the queue's configs, and completing an item — its scores stored on the run
 * and announced to an experiment's open comparison. The items' rows are stores/evaluation/annotation-queue-items.ts'.
 */
import { NotFound, ValidationError } from "../core/errors.js";
import { nameUuid } from "../core/ids.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import type { EventStore } from "../core/ports/event-store.js";
import type { PubSub } from "../core/ports/pubsub.js";
import type { Sql } from "../core/ports/sql.js";
import { announceExperimentScores } from "../core/pubsub/experiment-scores.js";
import {
  MAX_ITEMS_PER_ADD, addToQueue, findItem, heldBy, markCompleted, type ItemSource, type QueueItem,
} from "../stores/evaluation/annotation-queue-items.js";
import type { AnnotationQueue } from "../stores/evaluation/annotation-queues.js";
import { insertScoreRows, scoreRow } from "../stores/scores.js";
import { scoreValueProblem } from "./annotation-queues.js";

/** Adds runs named in a POST /api/annotation-queues/{id}/items body ({items: [{sdk_run_id, span_id?}]}); 404 names a run the project does not have. */
export async function addRunsToQueue(deps: { sql: Sql; events: EventStore }, queue: AnnotationQueue, body: unknown, source: ItemSource): Promise<{ added: number }> {
  const list = typeof body === "object" && body !== null && !Array.isArray(body) ? (body as { items?: unknown }).items : undefined;
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_ITEMS_PER_ADD) {
    throw new ValidationError({ field: "items", message: `items must list 1 to ${MAX_ITEMS_PER_ADD} runs like {"sdk_run_id": "…", "span_id": "…"}` });
  }
  const wanted = list.map((raw, i) => {
    const o = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
    if (typeof o.sdk_run_id !== "string" || o.sdk_run_id === "" || o.sdk_run_id.length > 256) throw new ValidationError({ field: `items[${i}].sdk_run_id`, message: `items[${i}].sdk_run_id must be a run's sdk_run_id` });
    if (o.span_id !== undefined && o.span_id !== null && (typeof o.span_id !== "string" || o.span_id.length > 64)) throw new ValidationError({ field: `items[${i}].span_id`, message: `items[${i}].span_id must be a span id of at most 64 characters` });
    return { sdk_run_id: o.sdk_run_id, span_id: (o.span_id as string | undefined) ?? "" };
  });
  const runs = new Map((await deps.events.loadRuns([...new Set(wanted.map((w) => w.sdk_run_id))].map((external_id) => ({ project_id: queue.project_id, external_id })))).map((r) => [r.external_id, r]));
  const items = wanted.map((w, i) => {
    const run = runs.get(w.sdk_run_id);
    if (!run) throw new NotFound({ resource: "run", message: `items[${i}]: run ${JSON.stringify(w.sdk_run_id)} not found` });
    return { sdk_run_id: run.external_id, run_id: run.run_id, span_id: w.span_id };
  });
  return { added: await addToQueue(deps.sql, queue.project_id, queue.id, items, source) };
}

/** The next item for `userId`: the one they hold, else the oldest pending one nobody holds, locked to them. */

export interface ReviewScore { readonly name: string; readonly value: number | boolean | string; readonly comment?: string }

/** A review's scores (each checked against the queue's configs) and comment, from a complete body; ValidationError names the field. */
export function reviewOf(queue: AnnotationQueue, body: unknown): { scores: ReviewScore[]; comment: string } {
  const b = (typeof body === "object" && body !== null && !Array.isArray(body) ? body : {}) as Record<string, unknown>;
  if (!Array.isArray(b.scores)) throw new ValidationError({ field: "scores", message: 'scores must be a list like [{"name": "correct", "value": true}]' });
  const scores: ReviewScore[] = b.scores.map((s, i) => {
    const o = (typeof s === "object" && s !== null ? s : {}) as Record<string, unknown>;
    const config = queue.score_configs.find((c) => c.name === o.name);
    if (!config) throw new ValidationError({ field: `scores[${i}].name`, message: `scores[${i}].name must be one of the queue's scores: ${queue.score_configs.map((c) => c.name).join(", ")}` });
    const problem = scoreValueProblem(config, o.value);
    if (problem) throw new ValidationError({ field: `scores[${i}].value`, message: `scores[${i}].value ${problem}` });
    if (o.comment !== undefined && (typeof o.comment !== "string" || o.comment.length > 2_000)) throw new ValidationError({ field: `scores[${i}].comment`, message: `scores[${i}].comment must be text of at most 2000 characters` });
    return { name: config.name, value: o.value as number | boolean | string, ...(o.comment ? { comment: o.comment as string } : {}) };
  });
  const comment = b.comment === undefined || b.comment === null ? "" : b.comment;
  if (typeof comment !== "string" || comment.length > 5_000) throw new ValidationError({ field: "comment", message: "comment must be text of at most 5000 characters" });
  return { scores, comment };
}

/**
 * Completes an item with the reviewer's scores (each checked against the queue's configs) and comment; scores of an
 * experiment's run are announced to the comparison pages open on it.
 */
export async function completeItem(
  deps: { sql: Sql; clickhouse: ClickHouse; events: EventStore; pubsub: Pick<PubSub, "publish"> }, queue: AnnotationQueue, itemId: string, userId: number, body: unknown,
): Promise<{ item: QueueItem; score_ids: string[] }> {
  const item = await findItem(deps.sql, queue, itemId);
  heldBy(item, userId);
  const { scores, comment } = reviewOf(queue, body);
  const run = await deps.events.getRun(queue.project_id, item.sdk_run_id);
  if (!run) throw new NotFound({ resource: "run", message: `the item's run ${JSON.stringify(item.sdk_run_id)} no longer exists; skip the item` });
  const now = new Date().toISOString();
  const ids = scores.map((s) => nameUuid(`runwatch:review:${item.id}:${s.name}`));
  if (scores.length) {
    await insertScoreRows(deps.clickhouse, scores.map((s, i) => scoreRow({ ...run, user_id: userId }, {
      sdk_run_id: run.external_id, ...(item.span_id ? { span_id: item.span_id } : {}), name: s.name, value: s.value,
      comment: [s.comment, comment].filter(Boolean).join("\n\n").replace(/\u0000/g, "\uFFFD").slice(0, 2_000), source: "human",
    }, ids[i]!, now, "reviewer")));
  }
  const done = await markCompleted(deps.sql, queue, item.id, userId, comment);
  if (scores.length) await announceExperimentScores(deps.pubsub, queue.project_id, [run]);
  return { item: done, score_ids: ids };
}


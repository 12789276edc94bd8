/**
 * Completing a review (docs/EVALUATORS.md, Annotation queues), as the API and the review page do it: the scores are
 * checked first, so a refused review writes nothing; then "Add to dataset" — the reviewed run's (or span's) input,
 * with the expected output the reviewer corrected, as one item of a dataset of the project (a new dataset version),
 * checked and written before the item is completed, so a refused one leaves the item pending; then the item.
 */
import { ValidationError } from "../core/errors.js";
import { runInputOutput, spanInputOutput } from "../core/events/run-io.js";
import { writeItems } from "../stores/datasets/datasets.js";
import { parseItem } from "../stores/datasets/items.js";
import { findItem, type QueueItem } from "../stores/evaluation/annotation-queue-items.js";
import type { AnnotationQueue } from "../stores/evaluation/annotation-queues.js";
import type { EvaluationDeps } from "./deps.js";
import { completeItem, reviewOf } from "./annotation-queue-items.js";

/** Writes the item when the body asks (`add_to_dataset: {dataset, expected_output}`); its place, else undefined. */
async function addReviewToDataset(deps: EvaluationDeps, projectId: number, userId: number, item: QueueItem, body: unknown): Promise<{ dataset: string; version: number; id: string } | undefined> {
  const ask = typeof body === "object" && body !== null ? (body as { add_to_dataset?: unknown }).add_to_dataset : undefined;
  if (ask === undefined || ask === null) return undefined;
  if (typeof ask !== "object" || Array.isArray(ask) || typeof (ask as { dataset?: unknown }).dataset !== "string") {
    throw new ValidationError({ field: "add_to_dataset.dataset", message: 'add_to_dataset must be like {"dataset": "name", "expected_output": …}' });
  }
  const { dataset, expected_output } = ask as { dataset: string; expected_output?: unknown };
  const run = await deps.events.getRun(projectId, item.sdk_run_id);
  const input = !run ? undefined
    : item.span_id ? spanInputOutput(await deps.events.eventsOfSpan(projectId, run.run_id, item.span_id)).input
    : runInputOutput(await deps.events.eventsOfTypes(projectId, run.run_id, ["run_start"], 5)).input;
  const parsed = parseItem(
    { input: input ?? null, ...(expected_output !== undefined ? { expected_output } : {}), source_sdk_run_id: item.sdk_run_id, ...(item.span_id ? { source_span_id: item.span_id } : {}) },
    "add_to_dataset",
    item.span_id ? "span" : "run",
  );
  const written = await writeItems(deps.ports.sql, projectId, dataset, [parsed], "review", userId);
  return { dataset, version: written.version, id: parsed.id };
}

/** Completes the queue's item `itemId` as reviewed by `userId` with a complete body (scores, comment, add_to_dataset). */
export async function completeReview(deps: EvaluationDeps, queue: AnnotationQueue, itemId: string, userId: number, body: unknown) {
  const item = await findItem(deps.ports.sql, queue, itemId);
  reviewOf(queue, body);
  const datasetItem = await addReviewToDataset(deps, queue.project_id, userId, item, body);
  const done = await completeItem({ sql: deps.ports.sql, clickhouse: deps.ports.clickhouse, events: deps.events, pubsub: deps.ports.pubsub }, queue, item.id, userId, body);
  return { ...done, ...(datasetItem ? { dataset_item: datasetItem } : {}) };
}

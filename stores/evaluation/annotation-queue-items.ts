/**
 * The items of an annotation queue: runs (or spans) waiting for review. `nextItem` hands a reviewer the oldest
 * pending item nobody holds, locked to them for LOCK_MINUTES (FOR UPDATE SKIP LOCKED: two reviewers asking at once
 * get different items), or the one they already hold. Completing an item stores the reviewer's scores (source
 * "human", ids named after the item and the score, so a repeated complete writes the same rows) and its comment.
 */
import { randomUUID } from "node:crypto";
import { Conflict, NotFound } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import type { Sql } from "../../core/ports/sql.js";
import type { AnnotationQueue } from "./annotation-queues.js";

export const LOCK_MINUTES = 30;
export const MAX_ITEMS_PER_ADD = 1_000;
export type ItemSource = "manual" | "rule" | "api";

export interface QueueItem {
  readonly id: string;
  readonly sdk_run_id: string;
  readonly run_id: string;
  readonly span_id: string | null;
  readonly source: ItemSource;
  readonly status: "pending" | "completed" | "skipped";
  readonly locked_by: number | null;
  readonly locked_until: string | null;
  readonly done_by: number | null;
  readonly done_at: string | null;
  readonly comment: string;
  readonly created_at: string;
}

const ITEM_COLUMNS = "id, sdk_run_id, run_id, span_id, source, status, locked_by, locked_until, done_by, done_at, comment, created_at";
const isoOrNull = (v: unknown) => (v ? new Date(v as string).toISOString() : null);
const toItem = (r: Record<string, unknown>): QueueItem => ({
  id: String(r.id), sdk_run_id: String(r.sdk_run_id), run_id: String(r.run_id), span_id: r.span_id ? String(r.span_id) : null,
  source: r.source as ItemSource, status: r.status as QueueItem["status"],
  locked_by: r.locked_by === null || r.locked_by === undefined ? null : Number(r.locked_by), locked_until: isoOrNull(r.locked_until),
  done_by: r.done_by === null || r.done_by === undefined ? null : Number(r.done_by), done_at: isoOrNull(r.done_at),
  comment: String(r.comment ?? ""), created_at: new Date(r.created_at as string).toISOString(),
});

/** Adds runs (or spans) to a queue; one already in it stays as it is. Returns how many were new. */
export async function addToQueue(sql: Sql, projectId: number, queueId: string, items: readonly { sdk_run_id: string; run_id: string; span_id: string }[], source: ItemSource): Promise<number> {
  if (items.length === 0) return 0;
  const rows = await sql.query(
    `INSERT INTO annotation_queue_items (id, queue_id, sdk_run_id, run_id, span_id, source)
     SELECT x.id, q.id, x.sdk_run_id, x.run_id, x.span_id, $6
       FROM unnest($2::uuid[], $3::text[], $4::uuid[], $5::text[]) AS x(id, sdk_run_id, run_id, span_id)
       JOIN annotation_queues q ON q.id = $1 AND q.project_id = $7
     ON CONFLICT (queue_id, run_id, span_id) DO NOTHING RETURNING id`,
    [queueId, items.map(() => randomUUID()), items.map((i) => i.sdk_run_id), items.map((i) => i.run_id), items.map((i) => i.span_id), source, projectId],
  );
  return rows.length;
}

export async function nextItem(sql: Sql, queue: AnnotationQueue, userId: number): Promise<QueueItem | undefined> {
  const [row] = await sql.query<Record<string, unknown>>(
    `UPDATE annotation_queue_items i SET locked_by = $2, locked_until = now() + make_interval(mins => $3)
       FROM (SELECT id FROM annotation_queue_items
              WHERE queue_id = $1 AND status = 'pending' AND (locked_until IS NULL OR locked_until < now() OR locked_by = $2)
              ORDER BY (locked_by IS NOT DISTINCT FROM $2 AND locked_until >= now()) DESC, created_at, id
              LIMIT 1 FOR UPDATE SKIP LOCKED) n
      WHERE i.id = n.id
      RETURNING ${ITEM_COLUMNS.split(", ").map((c) => `i.${c}`).join(", ")}`,
    [queue.id, userId, LOCK_MINUTES],
  );
  return row ? toItem(row) : undefined;
}

export async function findItem(sql: Sql, queue: AnnotationQueue, itemId: string): Promise<QueueItem> {
  const [row] = isUuid(itemId) ? await sql.query<Record<string, unknown>>(`SELECT ${ITEM_COLUMNS} FROM annotation_queue_items WHERE id = $1 AND queue_id = $2`, [itemId.toLowerCase(), queue.id]) : [];
  if (!row) throw new NotFound({ resource: "queue item", message: `no item ${JSON.stringify(itemId)} in this queue` });
  return toItem(row);
}

/** Refuses an item done already or held by another reviewer. */
export function heldBy(item: QueueItem, userId: number): void {
  if (item.status !== "pending") throw new Conflict({ code: "item_done", message: `this item was already ${item.status}` });
  const held = item.locked_by !== null && item.locked_until !== null && Date.parse(item.locked_until) > Date.now();
  if (held && item.locked_by !== userId) throw new Conflict({ code: "item_locked", message: "another reviewer holds this item; ask for the next one" });
}

/** Marks a pending item completed by `userId`; Conflict when it was completed or skipped meanwhile. */
export async function markCompleted(sql: Sql, queue: AnnotationQueue, itemId: string, userId: number, comment: string): Promise<QueueItem> {
  const [row] = await sql.query<Record<string, unknown>>(
    `UPDATE annotation_queue_items SET status = 'completed', done_by = $3, done_at = now(), comment = $4, locked_until = NULL
      WHERE id = $1 AND queue_id = $2 AND status = 'pending' RETURNING ${ITEM_COLUMNS}`,
    [itemId, queue.id, userId, comment.replace(/\u0000/g, "\uFFFD")],
  );
  if (!row) throw new Conflict({ code: "item_done", message: "this item was completed or skipped meanwhile" });
  return toItem(row);
}

export async function skipItem(sql: Sql, queue: AnnotationQueue, itemId: string, userId: number): Promise<QueueItem> {
  const item = await findItem(sql, queue, itemId);
  heldBy(item, userId);
  const [row] = await sql.query<Record<string, unknown>>(
    `UPDATE annotation_queue_items SET status = 'skipped', done_by = $3, done_at = now(), locked_until = NULL
      WHERE id = $1 AND queue_id = $2 AND status = 'pending' RETURNING ${ITEM_COLUMNS}`,
    [item.id, queue.id, userId],
  );
  if (!row) throw new Conflict({ code: "item_done", message: "this item was completed or skipped meanwhile" });
  return toItem(row);
}

export interface QueueProgress {
  readonly pending: number;
  readonly completed: number;
  readonly skipped: number;
  readonly reviewers: ReadonlyArray<{ user_id: number; email: string; completed: number; skipped: number }>;
}

/** The progress of several queues, in two grouped reads however many there are. */
export async function queuesProgress(sql: Sql, queueIds: readonly string[]): Promise<Map<string, QueueProgress>> {
  if (queueIds.length === 0) return new Map();
  const totals = await sql.query<Record<string, unknown>>(
    `SELECT queue_id, count(*) FILTER (WHERE status = 'pending') AS pending, count(*) FILTER (WHERE status = 'completed') AS completed,
            count(*) FILTER (WHERE status = 'skipped') AS skipped FROM annotation_queue_items WHERE queue_id = ANY($1::uuid[]) GROUP BY queue_id`,
    [queueIds],
  );
  const rows = await sql.query<Record<string, unknown>>(
    `SELECT queue_id, user_id, email, completed, skipped FROM (
       SELECT i.queue_id, i.done_by AS user_id, u.email, count(*) FILTER (WHERE i.status = 'completed') AS completed,
              count(*) FILTER (WHERE i.status = 'skipped') AS skipped,
              row_number() OVER (PARTITION BY i.queue_id ORDER BY count(*) FILTER (WHERE i.status = 'completed') DESC) AS place
         FROM annotation_queue_items i JOIN users u ON u.id = i.done_by
        WHERE i.queue_id = ANY($1::uuid[]) AND i.done_by IS NOT NULL GROUP BY i.queue_id, i.done_by, u.email) ranked
      WHERE place <= 100 ORDER BY queue_id, completed DESC`,
    [queueIds],
  );
  const out = new Map<string, QueueProgress>();
  for (const id of queueIds) {
    const t = totals.find((r) => String(r.queue_id) === id);
    out.set(id, {
      pending: Number(t?.pending ?? 0), completed: Number(t?.completed ?? 0), skipped: Number(t?.skipped ?? 0),
      reviewers: rows.filter((r) => String(r.queue_id) === id)
        .map((r) => ({ user_id: Number(r.user_id), email: String(r.email), completed: Number(r.completed), skipped: Number(r.skipped) })),
    });
  }
  return out;
}

export async function queueProgress(sql: Sql, queueId: string): Promise<QueueProgress> {
  return (await queuesProgress(sql, [queueId])).get(queueId)!;
}

export async function listItems(sql: Sql, queueId: string, status: QueueItem["status"] | undefined, limit = 100): Promise<QueueItem[]> {
  const rows = await sql.query<Record<string, unknown>>(
    `SELECT ${ITEM_COLUMNS} FROM annotation_queue_items WHERE queue_id = $1 AND ($2::text IS NULL OR status = $2) ORDER BY created_at DESC, id LIMIT $3`,
    [queueId, status ?? null, limit],
  );
  return rows.map(toItem);
}

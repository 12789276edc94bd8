/**
 * Annotation queues (docs/EVALUATION.md, Annotation queues): a named queue of a project with its score configs —
 * what a reviewer gives each item (name, a number in a range, true/false, or a category; a description) — and its
 * members (none: every member of the project may review). Their rows; what a queue may hold is checked by
 * evaluation/annotation-queues.ts.
 */
import { randomUUID } from "node:crypto";
import { Conflict, NotFound } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import type { Sql } from "../../core/ports/sql.js";
import { detachQueue } from "./rules.js";
import type { ScoreConfig } from "./shapes.js";

export type { ScoreConfig } from "./shapes.js";

export interface AnnotationQueue {
  readonly id: string;
  readonly project_id: number;
  readonly name: string;
  readonly description: string;
  readonly score_configs: readonly ScoreConfig[];
  /** User ids of the reviewers; empty: every member of the project. */
  readonly members: readonly number[];
  readonly created_at: string;
}

const json = <T>(v: unknown): T => (typeof v === "string" ? JSON.parse(v) : v) as T;

const SELECT = `SELECT q.id, q.project_id, q.name, q.description, q.score_configs, q.created_at,
  coalesce((SELECT array_agg(m.user_id ORDER BY m.user_id) FROM annotation_queue_members m WHERE m.queue_id = q.id), '{}') AS members
  FROM annotation_queues q`;

const toQueue = (r: Record<string, unknown>): AnnotationQueue => ({
  id: String(r.id),
  project_id: Number(r.project_id),
  name: String(r.name),
  description: String(r.description),
  score_configs: json<ScoreConfig[]>(r.score_configs),
  members: ((r.members as unknown[]) ?? []).map(Number),
  created_at: new Date(r.created_at as string).toISOString(),
});

/** What a new queue's rows hold (checked by evaluation/annotation-queues.ts). */
export interface NewQueue {
  readonly name: string;
  readonly description: string;
  readonly score_configs: readonly ScoreConfig[];
  readonly members: readonly number[];
}

export async function insertQueue(sql: Sql, projectId: number, queue: NewQueue): Promise<AnnotationQueue> {
  const id = randomUUID();
  try {
    await sql.transaction(async (tx) => {
      await tx.query(`INSERT INTO annotation_queues (id, project_id, name, description, score_configs) VALUES ($1, $2, $3, $4, $5)`, [id, projectId, queue.name, queue.description, JSON.stringify(queue.score_configs)]);
      if (queue.members.length) await tx.query(`INSERT INTO annotation_queue_members (queue_id, user_id) SELECT $1, unnest($2::bigint[])`, [id, queue.members]);
    });
  } catch (err) {
    if (/duplicate key|unique/i.test((err as Error).message)) throw new Conflict({ code: "queue_exists", field: "name", message: `a queue named ${JSON.stringify(queue.name)} exists` });
    throw err;
  }
  return (await findQueue(sql, projectId, id))!;
}

/** The project members among `emails` (lower-case), by e-mail. */
export async function membersByEmail(sql: Sql, projectId: number, emails: readonly string[]): Promise<Map<string, number>> {
  const rows = await sql.query<{ id: number; email: string }>(
    `SELECT u.id, lower(u.email) AS email FROM users u JOIN project_members pm ON pm.user_id = u.id AND pm.project_id = $1 WHERE lower(u.email) = ANY($2::text[])`,
    [projectId, emails],
  );
  return new Map(rows.map((r) => [r.email, Number(r.id)]));
}

/**
 * Deletes a queue with its items and reviewers, and detaches its rules (detachQueue) in one transaction; returns how
 * many rules changed (the caller announces them).
 */
export async function deleteQueueRows(sql: Sql, projectId: number, queueId: string): Promise<number> {
  let rules = 0;
  await sql.transaction(async (tx) => {
    rules = await detachQueue(tx, projectId, queueId);
    await tx.query(`DELETE FROM annotation_queues WHERE id = $1 AND project_id = $2`, [queueId, projectId]);
  });
  return rules;
}

export async function findQueue(sql: Sql, projectId: number, id: string): Promise<AnnotationQueue | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await sql.query<Record<string, unknown>>(`${SELECT} WHERE q.id = $1 AND q.project_id = $2`, [id.toLowerCase(), projectId]);
  return row ? toQueue(row) : undefined;
}

export async function queueWithId(sql: Sql, projectId: number, id: string): Promise<AnnotationQueue> {
  const q = await findQueue(sql, projectId, id);
  if (!q) throw new NotFound({ resource: "annotation queue", message: `no annotation queue ${JSON.stringify(id)} in this project` });
  return q;
}

export async function listQueues(sql: Sql, projectId: number): Promise<AnnotationQueue[]> {
  const rows = await sql.query<Record<string, unknown>>(`${SELECT} WHERE q.project_id = $1 ORDER BY q.name LIMIT 500`, [projectId]);
  return rows.map(toQueue);
}

export const queueJson = (q: AnnotationQueue) => ({
  id: q.id, name: q.name, description: q.description, score_configs: q.score_configs, members: q.members, created_at: q.created_at,
});

/**
 * Annotation queues (docs/EVALUATION.md, Annotation queues): a named queue of a project with its score configs —
 * what a reviewer gives each item (name, a number in a range, true/false, or a category; a description) — and its
 * members (none: every member of the project may review).
 */
import { randomUUID } from "node:crypto";
import { Either } from "effect";
import { Conflict, NotFound, ValidationError } from "../../core/errors.js";
import { displayTextProblem } from "../../core/display-text.js";
import { parseOutputDefinition, type OutputDefinition } from "../../core/evaluation/output.js";
import { isUuid } from "../../core/ids.js";
import type { Sql } from "../../core/ports/sql.js";
import { refuseUnstorableSetting } from "../../core/storable-setting.js";
import { audit } from "../accounts/projects.js";
import { detachQueue, rulesChanged, type RuleWrites } from "../evaluation/rules.js";

export type ScoreConfig = OutputDefinition & { readonly name: string; readonly description: string };

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

export const MAX_SCORE_CONFIGS = 20;
const json = <T>(v: unknown): T => (typeof v === "string" ? JSON.parse(v) : v) as T;

function text(field: string, v: unknown, max: number, required = true): string {
  if (v === undefined || v === null || v === "") {
    if (required) throw new ValidationError({ field, message: `${field} is required` });
    return "";
  }
  if (typeof v !== "string" || v.length > max || (required && v.trim() === "")) throw new ValidationError({ field, message: `${field} must be text of ${required ? 1 : 0} to ${max} characters` });
  const p = displayTextProblem(v.replace(/[\n\r\t]/g, " "));
  if (p) throw new ValidationError({ field, message: `${field} ${p}` });
  return v.trim();
}

export function parseScoreConfigs(raw: unknown): ScoreConfig[] {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_SCORE_CONFIGS) {
    throw new ValidationError({ field: "score_configs", message: `score_configs must list 1 to ${MAX_SCORE_CONFIGS} scores like {"name": "correct", "type": "boolean"}` });
  }
  const names = new Set<string>();
  return raw.map((c, i) => {
    const place = `score_configs[${i}]`;
    if (typeof c !== "object" || c === null || Array.isArray(c)) throw new ValidationError({ field: place, message: `${place} must be an object` });
    const o = c as Record<string, unknown>;
    const name = text(`${place}.name`, o.name, 100);
    if (names.has(name)) throw new ValidationError({ field: `${place}.name`, message: `${place}.name repeats ${JSON.stringify(name)}` });
    names.add(name);
    const def = parseOutputDefinition(o);
    if (Either.isLeft(def)) {
      const field = def.left.field.replace(/^output/, place);
      throw new ValidationError({ field, message: def.left.message.replace(/^output/, place) });
    }
    return { ...def.right, name, description: text(`${place}.description`, o.description, 1_000, false) };
  });
}

/** Checks a reviewer's value for a score config; the message names the place. */
export function scoreValueProblem(c: ScoreConfig, value: unknown): string | undefined {
  if (c.type === "boolean") return typeof value === "boolean" ? undefined : "must be true or false";
  if (c.type === "numeric") return typeof value === "number" && Number.isFinite(value) && value >= c.min && value <= c.max ? undefined : `must be a number from ${c.min} to ${c.max}`;
  return typeof value === "string" && c.categories.includes(value) ? undefined : `must be one of ${c.categories.join(", ")}`;
}

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

/** Reviewers by e-mail: each must be a member of the project. */
async function memberIds(sql: Sql, projectId: number, raw: unknown): Promise<number[]> {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw) || raw.length > 100) throw new ValidationError({ field: "members", message: "members must be a list of at most 100 e-mail addresses of project members" });
  const emails = raw.map((e, i) => text(`members[${i}]`, e, 320).toLowerCase());
  const rows = await sql.query<{ id: number; email: string }>(
    `SELECT u.id, lower(u.email) AS email FROM users u JOIN project_members pm ON pm.user_id = u.id AND pm.project_id = $1 WHERE lower(u.email) = ANY($2::text[])`,
    [projectId, emails],
  );
  const found = new Map(rows.map((r) => [r.email, Number(r.id)]));
  emails.forEach((e, i) => {
    if (!found.has(e)) throw new ValidationError({ field: `members[${i}]`, message: `members[${i}] (${e}) is not a member of this project` });
  });
  return [...new Set(found.values())];
}

export async function createQueue(sql: Sql, projectId: number, body: unknown): Promise<AnnotationQueue> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ValidationError({ message: 'the body must be a JSON object like {"name": "review", "score_configs": [{"name": "correct", "type": "boolean"}]}' });
  }
  refuseUnstorableSetting(body);
  const b = body as Record<string, unknown>;
  const name = text("name", b.name, 200);
  const configs = parseScoreConfigs(b.score_configs);
  const description = text("description", b.description, 2_000, false);
  const members = await memberIds(sql, projectId, b.members);
  const id = randomUUID();
  try {
    await sql.transaction(async (tx) => {
      await tx.query(`INSERT INTO annotation_queues (id, project_id, name, description, score_configs) VALUES ($1, $2, $3, $4, $5)`, [id, projectId, name, description, JSON.stringify(configs)]);
      if (members.length) await tx.query(`INSERT INTO annotation_queue_members (queue_id, user_id) SELECT $1, unnest($2::bigint[])`, [id, members]);
    });
  } catch (err) {
    if (/duplicate key|unique/i.test((err as Error).message)) throw new Conflict({ code: "queue_exists", field: "name", message: `a queue named ${JSON.stringify(name)} exists` });
    throw err;
  }
  return (await findQueue(sql, projectId, id))!;
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

/**
 * Deletes a queue with its items and reviewers, and detaches its rules (detachQueue); recorded in the project's audit
 * log. The scores its reviewers gave stay on their runs. NotFound for another project's queue.
 */
export async function deleteQueue(deps: RuleWrites, projectId: number, id: string, userId: number): Promise<AnnotationQueue> {
  const q = await queueWithId(deps.sql, projectId, id);
  let rules = 0;
  await deps.sql.transaction(async (tx) => {
    rules = await detachQueue(tx, projectId, q.id);
    await tx.query(`DELETE FROM annotation_queues WHERE id = $1 AND project_id = $2`, [q.id, projectId]);
  });
  if (rules > 0) await rulesChanged(deps, projectId);
  await audit(deps.sql, projectId, userId, "annotation_queue.delete", q.name, { queue_id: q.id, rules_changed: rules });
  return q;
}

/** Whether the user may review the queue's items. */
export const mayReview = (q: AnnotationQueue, userId: number): boolean => q.members.length === 0 || q.members.includes(userId);

export const queueJson = (q: AnnotationQueue) => ({
  id: q.id, name: q.name, description: q.description, score_configs: q.score_configs, members: q.members, created_at: q.created_at,
});

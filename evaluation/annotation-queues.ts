/**
 * Annotation queues (docs/EVALUATION.md, Annotation queues): what a queue may hold — a name, score configs (what a
 * reviewer gives each item), reviewers who are project members — checked here; the rows are
 * stores/evaluation/annotation-queues.ts'.
 */
import { Either } from "effect";
import { ValidationError } from "../core/errors.js";
import { displayTextProblem } from "../core/display-text.js";
import type { Sql } from "../core/ports/sql.js";
import { refuseUnstorableSetting } from "../core/storable-setting.js";
import { audit } from "../stores/accounts/projects.js";
import {
  deleteQueueRows, insertQueue, membersByEmail, queueWithId, type AnnotationQueue, type ScoreConfig,
} from "../stores/evaluation/annotation-queues.js";
import { parseOutputDefinition } from "./model/output.js";
import { rulesChanged, type RuleWrites } from "./rules.js";

export const MAX_SCORE_CONFIGS = 20;

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


/** Reviewers by e-mail: each must be a member of the project. */
async function memberIds(sql: Sql, projectId: number, raw: unknown): Promise<number[]> {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw) || raw.length > 100) throw new ValidationError({ field: "members", message: "members must be a list of at most 100 e-mail addresses of project members" });
  const emails = raw.map((e, i) => text(`members[${i}]`, e, 320).toLowerCase());
  const found = await membersByEmail(sql, projectId, emails);
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
  return insertQueue(sql, projectId, { name, description, score_configs: configs, members });
}


/**
 * Deletes a queue with its items and reviewers, and detaches its rules (stores: deleteQueueRows); recorded in the project's audit
 * log. The scores its reviewers gave stay on their runs. NotFound for another project's queue.
 */
export async function deleteQueue(deps: RuleWrites, projectId: number, id: string, userId: number): Promise<AnnotationQueue> {
  const q = await queueWithId(deps.sql, projectId, id);
  const rules = await deleteQueueRows(deps.sql, projectId, q.id);
  if (rules > 0) await rulesChanged(deps, projectId);
  await audit(deps.sql, projectId, userId, "annotation_queue.delete", q.name, { queue_id: q.id, rules_changed: rules });
  return q;
}

/** Whether the user may review the queue's items. */
export const mayReview = (q: AnnotationQueue, userId: number): boolean => q.members.length === 0 || q.members.includes(userId);


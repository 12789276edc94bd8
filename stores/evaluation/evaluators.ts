/**
 * Evaluators in Postgres (migration 109): a project's named evaluators and their versions. A change of definition
 * makes a new version; scores and jobs name the version that gave them, and any version can be read back.
 */
import { randomUUID } from "node:crypto";
import { Conflict, NotFound, ValidationError } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import type { Sql } from "../../core/ports/sql.js";
import { nameProblem, parseDefinition, type EvaluatorDefinition, type EvaluatorType } from "./definition.js";

export interface Evaluator {
  readonly id: string;
  readonly project_id: number;
  readonly name: string;
  readonly description: string;
  readonly type: EvaluatorType;
  readonly version: number;
  readonly definition: EvaluatorDefinition;
  readonly created_at: string;
}

export interface EvaluatorVersion {
  readonly version: number;
  readonly definition: EvaluatorDefinition;
  readonly created_at: string;
}

const json = <T>(v: unknown): T => (typeof v === "string" ? JSON.parse(v) : v) as T;
const iso = (v: unknown) => new Date(v as string).toISOString();

const rowToEvaluator = (r: Record<string, unknown>): Evaluator => ({
  id: String(r.id),
  project_id: Number(r.project_id),
  name: String(r.name),
  description: String(r.description),
  type: r.type as EvaluatorType,
  version: Number(r.version),
  definition: json<EvaluatorDefinition>(r.definition),
  created_at: iso(r.created_at),
});

const SELECT = `SELECT e.id, e.project_id, e.name, e.description, e.type, v.version, v.definition, e.created_at
  FROM evaluators e JOIN evaluator_versions v ON v.evaluator_id = e.id`;

function descriptionOf(v: unknown): string {
  if (v === undefined || v === null) return "";
  if (typeof v !== "string" || v.length > 2_000) throw new ValidationError({ field: "description", message: "description must be text of at most 2000 characters" });
  return v;
}

/** Creates an evaluator (version 1) from a POST /api/evaluators body; 409 for a name the project has. */
export async function createEvaluator(sql: Sql, projectId: number, userId: number | null, body: unknown): Promise<Evaluator> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ValidationError({ message: 'the body must be a JSON object like {"name": "correctness", "type": "llm_judge", "prompt": "…", "output": {"type": "boolean"}}' });
  }
  const b = body as Record<string, unknown>;
  const name = nameProblem("name", b.name);
  const definition = parseDefinition(b, name);
  const description = descriptionOf(b.description);
  const id = randomUUID();
  try {
    await sql.transaction(async (tx) => {
      await tx.query(`INSERT INTO evaluators (id, project_id, name, description, type) VALUES ($1, $2, $3, $4, $5)`, [id, projectId, name, description, definition.type]);
      await tx.query(`INSERT INTO evaluator_versions (evaluator_id, version, definition, created_by) VALUES ($1, 1, $2, $3)`, [id, JSON.stringify(definition), userId]);
    });
  } catch (err) {
    if (/duplicate key|unique/i.test((err as Error).message)) throw new Conflict({ code: "evaluator_exists", field: "name", message: `an evaluator named ${JSON.stringify(name)} exists; change it to make a new version` });
    throw err;
  }
  return (await findEvaluator(sql, projectId, id))!;
}

/**
 * The definition a change of `current` would save (its type stays; the definition fields as in createEvaluator):
 * what a new version holds, and what the playground tries before it is saved.
 */
export function changedDefinition(current: Evaluator, body: unknown): { definition: EvaluatorDefinition; fields: Record<string, unknown> } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new ValidationError({ message: "the body must be a JSON object" });
  const b: Record<string, unknown> = { type: current.type, ...(body as Record<string, unknown>) };
  if (b.type !== current.type) throw new ValidationError({ field: "type", message: `type cannot change (it is ${current.type}); make a new evaluator` });
  return { definition: parseDefinition(b, current.name), fields: b };
}

/** A new version of an evaluator (its type stays); the definition fields as in createEvaluator. */
export async function updateEvaluator(sql: Sql, projectId: number, id: string, userId: number | null, body: unknown): Promise<Evaluator> {
  const current = await findEvaluator(sql, projectId, id);
  if (!current) throw new NotFound({ resource: "evaluator", message: `evaluator ${JSON.stringify(id)} not found` });
  const { definition, fields: b } = changedDefinition(current, body);
  const description = b.description === undefined ? current.description : descriptionOf(b.description);
  await sql.transaction(async (tx) => {
    const [row] = await tx.query<{ latest_version: number }>(
      `UPDATE evaluators SET latest_version = latest_version + 1, description = $3 WHERE id = $1 AND project_id = $2 RETURNING latest_version`,
      [id, projectId, description],
    );
    await tx.query(`INSERT INTO evaluator_versions (evaluator_id, version, definition, created_by) VALUES ($1, $2, $3, $4)`, [id, row!.latest_version, JSON.stringify(definition), userId]);
  });
  return (await findEvaluator(sql, projectId, id))!;
}

/** The evaluator at its latest version (or `version`), when it is the project's. */
export async function findEvaluator(sql: Sql, projectId: number, id: string, version?: number): Promise<Evaluator | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await sql.query<Record<string, unknown>>(
    `${SELECT} AND v.version = ${version === undefined ? "e.latest_version" : "$3"} WHERE e.id = $1 AND e.project_id = $2`,
    version === undefined ? [id, projectId] : [id, projectId, version],
  );
  return row ? rowToEvaluator(row) : undefined;
}

export async function evaluatorNamed(sql: Sql, projectId: number, name: string): Promise<Evaluator | undefined> {
  const [row] = await sql.query<Record<string, unknown>>(`${SELECT} AND v.version = e.latest_version WHERE e.project_id = $1 AND e.name = $2`, [projectId, name]);
  return row ? rowToEvaluator(row) : undefined;
}

export async function listEvaluators(sql: Sql, projectId: number): Promise<Evaluator[]> {
  const rows = await sql.query<Record<string, unknown>>(`${SELECT} AND v.version = e.latest_version WHERE e.project_id = $1 ORDER BY e.name LIMIT 1000`, [projectId]);
  return rows.map(rowToEvaluator);
}

export async function evaluatorVersions(sql: Sql, id: string): Promise<EvaluatorVersion[]> {
  const rows = await sql.query<Record<string, unknown>>(`SELECT version, definition, created_at FROM evaluator_versions WHERE evaluator_id = $1 ORDER BY version DESC LIMIT 200`, [id]);
  return rows.map((r) => ({ version: Number(r.version), definition: json<EvaluatorDefinition>(r.definition), created_at: iso(r.created_at) }));
}

export const evaluatorJson = (e: Evaluator) => ({
  ...e.definition, id: e.id, name: e.name, description: e.description, version: e.version, created_at: e.created_at,
});

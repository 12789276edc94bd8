/**
 * Evaluators in Postgres (migration 109): a project's named evaluators and their versions (what a definition may
 * hold is checked by evaluation/evaluators.ts). A change of definition
 * makes a new version; scores and jobs name the version that gave them, and any version can be read back.
 */
import { randomUUID } from "node:crypto";
import { Conflict } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import type { Sql } from "../../core/ports/sql.js";
import type { EvaluatorDefinition, EvaluatorType } from "./shapes.js";

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

/** Inserts an evaluator at version 1 (its definition checked by evaluation/evaluators.ts); 409 for a name the project has. */
export async function insertEvaluator(sql: Sql, projectId: number, userId: number | null, e: { name: string; description: string; definition: EvaluatorDefinition }): Promise<Evaluator> {
  const id = randomUUID();
  try {
    await sql.transaction(async (tx) => {
      await tx.query(`INSERT INTO evaluators (id, project_id, name, description, type) VALUES ($1, $2, $3, $4, $5)`, [id, projectId, e.name, e.description, e.definition.type]);
      await tx.query(`INSERT INTO evaluator_versions (evaluator_id, version, definition, created_by) VALUES ($1, 1, $2, $3)`, [id, JSON.stringify(e.definition), userId]);
    });
  } catch (err) {
    if (/duplicate key|unique/i.test((err as Error).message)) throw new Conflict({ code: "evaluator_exists", field: "name", message: `an evaluator named ${JSON.stringify(e.name)} exists; change it to make a new version` });
    throw err;
  }
  return (await findEvaluator(sql, projectId, id))!;
}

/** Saves a new version of the project's evaluator `id` with its description. */
export async function insertEvaluatorVersion(sql: Sql, projectId: number, id: string, userId: number | null, definition: EvaluatorDefinition, description: string): Promise<Evaluator> {
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

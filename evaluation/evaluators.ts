/**
 * Evaluators (docs/EVALUATORS.md): what a POST /api/evaluators body may define — an LLM judge's prompt, model and
 * output, or a built-in check — checked here; a change of definition makes a new version. The rows are
 * stores/evaluation/evaluators.ts'.
 */
import { NotFound, ValidationError } from "../core/errors.js";
import type { Sql } from "../core/ports/sql.js";
import { findEvaluator, insertEvaluator, insertEvaluatorVersion, type Evaluator } from "../stores/evaluation/evaluators.js";
import { nameProblem, parseDefinition, type EvaluatorDefinition } from "./model/definition.js";

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
  return insertEvaluator(sql, projectId, userId, { name, description, definition });
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
  return insertEvaluatorVersion(sql, projectId, id, userId, definition, description);
}


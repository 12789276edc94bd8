/**
 * Online evaluation rules in Postgres (migrations 109, 110, 130): their rows, read and written as they are; what a
 * rule may say is checked before it gets here (evaluation/rules.ts).
 */
import { randomUUID } from "node:crypto";
import { Conflict, NotFound } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import type { Sql } from "../../core/ports/sql.js";
import { insertWithinRuleCap } from "./rule-cap.js";
import type { QueueAction, RuleFilter } from "./shapes.js";

export type { QueueAction } from "./shapes.js";

/** What a new rule's row holds (checked by evaluation/rules.ts); within the project's rule cap (rule-cap.ts). */
export interface NewRule {
  /** null: the rule only routes to its action's queue. */
  readonly evaluator_id: string | null;
  readonly name: string;
  readonly target: "run" | "span";
  readonly filter: RuleFilter;
  readonly sampling: number;
  readonly delay_s: number;
  readonly queue_action: QueueAction | null;
}

export interface EvaluationRule extends NewRule {
  readonly id: string;
  readonly project_id: number;
  readonly enabled: boolean;
  readonly created_by: number | null;
  readonly created_at: string;
}

const json = <T>(v: unknown): T => (typeof v === "string" ? JSON.parse(v) : v) as T;

const toRule = (r: Record<string, unknown>): EvaluationRule => ({
  id: String(r.id),
  project_id: Number(r.project_id),
  evaluator_id: r.evaluator_id === null || r.evaluator_id === undefined ? null : String(r.evaluator_id),
  name: String(r.name),
  target: r.target as "run" | "span",
  filter: json<RuleFilter>(r.filter ?? {}),
  sampling: Number(r.sampling),
  delay_s: Number(r.delay_s),
  queue_action: r.queue_action ? json<QueueAction>(r.queue_action) : null,
  enabled: Boolean(r.enabled),
  created_by: r.created_by === null || r.created_by === undefined ? null : Number(r.created_by),
  created_at: new Date(r.created_at as string).toISOString(),
});

const COLUMNS = "id, project_id, evaluator_id, name, target, filter, sampling, delay_s, queue_action, enabled, created_by, created_at";

export async function insertRule(sql: Sql, projectId: number, userId: number | null, rule: NewRule): Promise<EvaluationRule> {
  try {
    const [row] = await insertWithinRuleCap(sql, projectId, (tx) => tx.query<Record<string, unknown>>(
      `INSERT INTO evaluation_rules (id, project_id, evaluator_id, name, target, filter, sampling, delay_s, queue_action, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${COLUMNS}`,
      [randomUUID(), projectId, rule.evaluator_id, rule.name, rule.target, JSON.stringify(rule.filter), rule.sampling, rule.delay_s, rule.queue_action ? JSON.stringify(rule.queue_action) : null, userId],
    ));
    return toRule(row!);
  } catch (err) {
    if (/duplicate key|unique/i.test((err as Error).message)) throw new Conflict({ code: "rule_exists", field: "name", message: `a rule named ${JSON.stringify(rule.name)} exists` });
    throw err;
  }
}

export async function updateRuleEnabled(sql: Sql, projectId: number, id: string, enabled: boolean): Promise<void> {
  await sql.query(`UPDATE evaluation_rules SET enabled = $3 WHERE id = $1 AND project_id = $2`, [id, projectId, enabled]);
}

export async function deleteRuleRow(sql: Sql, projectId: number, id: string): Promise<void> {
  await sql.query(`DELETE FROM evaluation_rules WHERE id = $1 AND project_id = $2`, [id, projectId]);
}

export async function findRule(sql: Sql, projectId: number, id: string): Promise<EvaluationRule | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await sql.query<Record<string, unknown>>(`SELECT ${COLUMNS} FROM evaluation_rules WHERE id = $1 AND project_id = $2`, [id, projectId]);
  return row ? toRule(row) : undefined;
}

export async function ruleWithId(sql: Sql, projectId: number, id: string): Promise<EvaluationRule> {
  const r = await findRule(sql, projectId, id);
  if (!r) throw new NotFound({ resource: "evaluation rule", message: `no evaluation rule ${JSON.stringify(id)} in this project` });
  return r;
}

/** The project's rules (of one evaluator, or adding to one queue); `enabledOnly` for the pipeline. */
export async function listRules(sql: Sql, projectId: number, opts: { evaluatorId?: string; queueId?: string; enabledOnly?: boolean } = {}): Promise<EvaluationRule[]> {
  const rows = await sql.query<Record<string, unknown>>(
    `SELECT ${COLUMNS} FROM evaluation_rules WHERE project_id = $1 AND ($2::uuid IS NULL OR evaluator_id = $2::uuid) AND ($3::boolean = false OR enabled)
       AND ($4::text IS NULL OR queue_action->>'queue_id' = $4::text)
     ORDER BY created_at LIMIT 500`,
    [projectId, opts.evaluatorId ?? null, opts.enabledOnly ?? false, opts.queueId ?? null],
  );
  return rows.map(toRule);
}

/** The enabled rules of several projects at once (the pipeline's cache fill). */
export async function enabledRulesOf(sql: Sql, projectIds: readonly number[]): Promise<EvaluationRule[]> {
  if (projectIds.length === 0) return [];
  const rows = await sql.query<Record<string, unknown>>(`SELECT ${COLUMNS} FROM evaluation_rules WHERE project_id = ANY($1::bigint[]) AND enabled`, [projectIds]);
  return rows.map(toRule);
}

/**
 * Before a queue is deleted, in its transaction (deleteQueue, evaluation/annotation-queues.ts): the rules that only fill
 * it are deleted, and judging rules that also added to it keep judging without that action. Returns how many rules
 * changed; the caller announces them (rulesChanged) once the transaction is committed.
 */
export async function detachQueue(tx: Sql, projectId: number, queueId: string): Promise<number> {
  const deleted = await tx.query(`DELETE FROM evaluation_rules WHERE project_id = $1 AND evaluator_id IS NULL AND queue_action->>'queue_id' = $2 RETURNING id`, [projectId, queueId]);
  const kept = await tx.query(`UPDATE evaluation_rules SET queue_action = NULL WHERE project_id = $1 AND queue_action->>'queue_id' = $2 RETURNING id`, [projectId, queueId]);
  return deleted.length + kept.length;
}

export const ruleJson = (r: EvaluationRule) => ({
  id: r.id, name: r.name, evaluator_id: r.evaluator_id, target: r.target, filter: r.filter, sampling: r.sampling,
  delay_s: r.delay_s, queue_action: r.queue_action, enabled: r.enabled, created_at: r.created_at,
});

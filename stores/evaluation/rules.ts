/**
 * Online evaluation rules in Postgres (migrations 109, 110): target + filter + sampling, and what a matching run
 * (or span) gets — an evaluator's judgement (after the delay), an "add to queue" action, or both:
 *
 * - evaluator + queue action {queue_id, below? | equals?}: the queue gets the runs the evaluator scores below a
 *   threshold or equal to a value;
 * - queue action {queue_id} alone: the queue gets every matching run (or span) as it ends — e.g. runs with errors;
 * - queue action {queue_id, score_name, below? | equals?} alone: the queue gets the matching runs given such a
 *   score through the API, the SDKs, the run page or an event — e.g. thumbs down (`user_feedback` equals false).
 *
 * The pipeline reads a project's enabled rules through a short cache (plugins/online-evaluation.ts), which every
 * change here drops at once (PubSub "evaluation.rules").
 */
import { randomUUID } from "node:crypto";
import { Conflict, NotFound, ValidationError } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import type { PubSub } from "../../core/ports/pubsub.js";
import type { Sql } from "../../core/ports/sql.js";
import { EVALUATION_RULES_CHANNEL } from "./jobs.js";
import { findEvaluator } from "./evaluators.js";
import { insertWithinRuleCap } from "./rule-cap.js";
import { parseRuleFilter, type RuleFilter } from "./rule-filter.js";
import { MAX_SCORE_NAME } from "../scores.js";
import { audit } from "../accounts/projects.js";

export interface QueueAction {
  readonly queue_id: string;
  /** A rule without an evaluator: add when a score of this name is given (else: when the run ends). */
  readonly score_name?: string;
  /** Add when a numeric score is below this (true and false count as 1 and 0). */
  readonly below?: number;
  /** Add when the score equals this (false, "severe", …). */
  readonly equals?: number | boolean | string;
}

/** Whether a score's value meets a queue action's condition (below / equals). */
export const queueActionWants = (a: QueueAction, value: number | boolean | string): boolean => {
  const n = typeof value === "boolean" ? Number(value) : value;
  return (a.below !== undefined && typeof n === "number" && n < a.below) || (a.equals !== undefined && value === a.equals);
};

/** A rule that routes runs to a queue as they end, without judging them. */
export const routesEndedRuns = (r: EvaluationRule): boolean => r.evaluator_id === null && r.queue_action !== null && r.queue_action.score_name === undefined;
/** A rule that routes runs to a queue when they are given a score of the action's name. */
export const routesScoredRuns = (r: EvaluationRule): boolean => r.evaluator_id === null && r.queue_action?.score_name !== undefined;

export interface EvaluationRule {
  readonly id: string;
  readonly project_id: number;
  /** null: the rule only routes to its action's queue. */
  readonly evaluator_id: string | null;
  readonly name: string;
  readonly target: "run" | "span";
  readonly filter: RuleFilter;
  readonly sampling: number;
  readonly delay_s: number;
  readonly queue_action: QueueAction | null;
  readonly enabled: boolean;
  readonly created_by: number | null;
  readonly created_at: string;
}

export const MAX_DELAY_S = 86_400;
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

/** What changing a rule needs: the store, and the bus on which pipelines hear that a project's rules changed. */
export interface RuleWrites {
  readonly sql: Sql;
  readonly pubsub: PubSub;
}
/** Tells the pipelines' rule caches that a project's rules changed (they read them again at their next part). */
export const rulesChanged = (deps: RuleWrites, projectId: number) => deps.pubsub.publish(EVALUATION_RULES_CHANNEL, String(projectId));

const COLUMNS = "id, project_id, evaluator_id, name, target, filter, sampling, delay_s, queue_action, enabled, created_by, created_at";

async function parseQueueAction(sql: Sql, projectId: number, raw: unknown, judged: boolean): Promise<(QueueAction & { queue_name: string }) | null> {
  if (raw === undefined || raw === null) {
    if (!judged) throw new ValidationError({ field: "evaluator_id", message: "a rule needs an evaluator_id, a queue_action, or both" });
    return null;
  }
  if (typeof raw !== "object" || Array.isArray(raw)) throw new ValidationError({ field: "queue_action", message: 'queue_action must be an object like {"queue_id": "…", "below": 0.5}' });
  const a = raw as Record<string, unknown>;
  const [queue] = typeof a.queue_id === "string" && isUuid(a.queue_id)
    ? await sql.query<{ name: string }>(`SELECT name FROM annotation_queues WHERE id = $1 AND project_id = $2`, [a.queue_id, projectId])
    : [];
  if (!queue) throw new ValidationError({ field: "queue_action.queue_id", message: "queue_action.queue_id must be the id of one of the project's annotation queues" });
  if (a.below !== undefined && (typeof a.below !== "number" || !Number.isFinite(a.below))) throw new ValidationError({ field: "queue_action.below", message: "queue_action.below must be a number" });
  if (a.equals !== undefined && !["number", "boolean", "string"].includes(typeof a.equals)) throw new ValidationError({ field: "queue_action.equals", message: "queue_action.equals must be a number, a boolean or a category" });
  if (a.score_name !== undefined) {
    if (judged) throw new ValidationError({ field: "queue_action.score_name", message: "queue_action.score_name is for rules without an evaluator; a judging rule's action reads its evaluator's score" });
    if (typeof a.score_name !== "string" || a.score_name.trim() === "" || a.score_name.length > MAX_SCORE_NAME || /[\u0000-\u001f]/.test(a.score_name)) {
      throw new ValidationError({ field: "queue_action.score_name", message: `queue_action.score_name must be a score's name of 1 to ${MAX_SCORE_NAME} characters, such as user_feedback` });
    }
  }
  const conditional = a.below !== undefined || a.equals !== undefined;
  if ((judged || a.score_name !== undefined) && !conditional) {
    throw new ValidationError({ field: "queue_action", message: "queue_action needs below or equals: when to add a run to the queue" });
  }
  if (!judged && a.score_name === undefined && conditional) {
    throw new ValidationError({ field: "queue_action.score_name", message: "queue_action.score_name is required with below or equals in a rule without an evaluator: the score they compare" });
  }
  return {
    queue_id: (a.queue_id as string).toLowerCase(),
    queue_name: queue.name,
    ...(a.score_name !== undefined ? { score_name: (a.score_name as string).trim() } : {}),
    ...(a.below !== undefined ? { below: a.below as number } : {}),
    ...(a.equals !== undefined ? { equals: a.equals as number | boolean | string } : {}),
  };
}

const withoutName = ({ queue_name: _n, ...action }: QueueAction & { queue_name: string }): QueueAction => action;

/** A rule's name when none is given: what it judges or routes, on which agent ("errors on support-bot → triage"). */
function defaultName(evaluatorName: string | undefined, filter: RuleFilter, action: (QueueAction & { queue_name: string }) | null): string {
  const agent = filter.agent_name ?? "every agent";
  if (evaluatorName !== undefined) return `${evaluatorName} on ${agent}`.slice(0, 200);
  const a = action!;
  const when = a.score_name === undefined ? (filter.has_error ? "errors" : "ended runs")
    : `${a.score_name} ${a.below !== undefined ? `below ${a.below}` : `= ${String(a.equals)}`}`;
  return `${when} on ${agent} → ${a.queue_name}`.slice(0, 200);
}

/** Creates a rule from a POST /api/evaluation-rules body. */
export async function createRule(deps: RuleWrites, projectId: number, userId: number | null, body: unknown): Promise<EvaluationRule> {
  const { sql } = deps;
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ValidationError({ message: 'the body must be a JSON object like {"evaluator_id": "…", "target": "run", "sampling": 0.5}' });
  }
  const b = body as Record<string, unknown>;
  const judged = b.evaluator_id !== undefined && b.evaluator_id !== null && b.evaluator_id !== "";
  const evaluator = judged ? (typeof b.evaluator_id === "string" ? await findEvaluator(sql, projectId, b.evaluator_id) : undefined) : null;
  if (evaluator === undefined) throw new ValidationError({ field: "evaluator_id", message: "evaluator_id must be the id of one of the project's evaluators" });
  const target = b.target ?? "run";
  if (target !== "run" && target !== "span") throw new ValidationError({ field: "target", message: 'target must be "run" or "span"' });
  const filter = parseRuleFilter(b.filter, target);
  const action = await parseQueueAction(sql, projectId, b.queue_action, judged);
  // Metadata and tags are read with the run's events, which only a judging rule's worker does.
  if (!evaluator && (filter.metadata || filter.tags)) {
    throw new ValidationError({ field: filter.metadata ? "filter.metadata" : "filter.tags", message: `filter.${filter.metadata ? "metadata" : "tags"} applies to rules with an evaluator` });
  }
  if (action?.score_name !== undefined && target !== "run") throw new ValidationError({ field: "target", message: 'a rule on scores given routes runs: target must be "run"' });
  if (!evaluator && b.delay_s !== undefined && b.delay_s !== 0) throw new ValidationError({ field: "delay_s", message: "delay_s applies to rules with an evaluator (a queue rule adds a run at once)" });
  const sampling = b.sampling ?? 1;
  if (typeof sampling !== "number" || !(sampling >= 0 && sampling <= 1)) throw new ValidationError({ field: "sampling", message: "sampling must be a share from 0 to 1 (0.1 = 10% of the matching runs)" });
  const delay = b.delay_s ?? 0;
  if (!Number.isInteger(delay) || (delay as number) < 0 || (delay as number) > MAX_DELAY_S) throw new ValidationError({ field: "delay_s", message: `delay_s must be whole seconds from 0 to ${MAX_DELAY_S}` });
  const name = b.name === undefined ? defaultName(evaluator?.name, filter, action) : b.name;
  if (typeof name !== "string" || name.trim() === "" || name.length > 200 || /[\u0000-\u001f]/.test(name)) throw new ValidationError({ field: "name", message: "name must be text of 1 to 200 characters" });
  const id = randomUUID();
  try {
    const [row] = await insertWithinRuleCap(sql, projectId, (tx) => tx.query<Record<string, unknown>>(
      `INSERT INTO evaluation_rules (id, project_id, evaluator_id, name, target, filter, sampling, delay_s, queue_action, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${COLUMNS}`,
      [id, projectId, evaluator?.id ?? null, name.trim(), target, JSON.stringify(filter), sampling, delay, action ? JSON.stringify(withoutName(action)) : null, userId],
    ));
    await rulesChanged(deps, projectId);
    const rule = toRule(row!);
    await audit(sql, projectId, userId, "evaluation_rule.create", rule.name, { rule_id: rule.id, evaluator_id: rule.evaluator_id, sampling: rule.sampling, target: rule.target });
    return rule;
  } catch (err) {
    if (/duplicate key|unique/i.test((err as Error).message)) throw new Conflict({ code: "rule_exists", field: "name", message: `a rule named ${JSON.stringify(name)} exists` });
    throw err;
  }
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

/** Turns a rule on or off (recorded in the project's audit log as `actorId`'s). */
export async function setRuleEnabled(deps: RuleWrites, projectId: number, id: string, enabled: boolean, actorId: number | null): Promise<void> {
  const rule = await ruleWithId(deps.sql, projectId, id);
  await deps.sql.query(`UPDATE evaluation_rules SET enabled = $3 WHERE id = $1 AND project_id = $2`, [id, projectId, enabled]);
  await rulesChanged(deps, projectId);
  await audit(deps.sql, projectId, actorId, enabled ? "evaluation_rule.enable" : "evaluation_rule.disable", rule.name, { rule_id: rule.id });
}

/** Deletes a rule and its waiting jobs (recorded in the project's audit log as `actorId`'s). */
export async function deleteRule(deps: RuleWrites, projectId: number, id: string, actorId: number | null): Promise<void> {
  const rule = await ruleWithId(deps.sql, projectId, id);
  await deps.sql.query(`DELETE FROM evaluation_rules WHERE id = $1 AND project_id = $2`, [id, projectId]);
  await rulesChanged(deps, projectId);
  await audit(deps.sql, projectId, actorId, "evaluation_rule.delete", rule.name, { rule_id: rule.id, evaluator_id: rule.evaluator_id });
}

/**
 * Before a queue is deleted, in its transaction (deleteQueue, stores/annotation/queues.ts): the rules that only fill
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

/**
 * Online evaluation rules (docs/EVALUATION.md, Online rules): what a POST /api/evaluation-rules body may ask, checked
 * here, and what a change tells the pipelines. A rule is target + filter + sampling and what a matching run (or span)
 * gets — an evaluator's judgement (after the delay), an "add to queue" action, or both:
 *
 * - evaluator + queue action {queue_id, below? | equals?}: the queue gets the runs the evaluator scores below a
 *   threshold or equal to a value;
 * - queue action {queue_id} alone: the queue gets every matching run (or span) as it ends — e.g. runs with errors;
 * - queue action {queue_id, score_name, below? | equals?} alone: the queue gets the matching runs given such a
 *   score through the API, the SDKs, the run page or an event — e.g. thumbs down (`user_feedback` equals false).
 *
 * The pipeline reads a project's enabled rules through a short cache (core/project-cache.ts, in
 * evaluation/online/online-rules.ts), which every change here drops at once (PubSub "evaluation.rules"). The rows
 * live in stores/evaluation/rules.ts.
 */
import { ValidationError } from "../core/errors.js";
import type { PubSub } from "../core/ports/pubsub.js";
import type { Sql } from "../core/ports/sql.js";
import { audit } from "../stores/accounts/projects.js";
import { findQueue } from "../stores/evaluation/annotation-queues.js";
import { findEvaluator } from "../stores/evaluation/evaluators.js";
import { deleteRuleRow, insertRule, ruleWithId, updateRuleEnabled, type EvaluationRule, type QueueAction } from "../stores/evaluation/rules.js";
import { MAX_SCORE_NAME } from "../stores/scores.js";
import { EVALUATION_RULES_CHANNEL } from "./channels.js";
import { parseRuleFilter, type RuleFilter } from "./model/rule-filter.js";

/** Whether a score's value meets a queue action's condition (below / equals). */
export const queueActionWants = (a: QueueAction, value: number | boolean | string): boolean => {
  const n = typeof value === "boolean" ? Number(value) : value;
  return (a.below !== undefined && typeof n === "number" && n < a.below) || (a.equals !== undefined && value === a.equals);
};

/** A rule that routes runs to a queue as they end, without judging them. */
export const routesEndedRuns = (r: EvaluationRule): boolean => r.evaluator_id === null && r.queue_action !== null && r.queue_action.score_name === undefined;
/** A rule that routes runs to a queue when they are given a score of the action's name. */
export const routesScoredRuns = (r: EvaluationRule): boolean => r.evaluator_id === null && r.queue_action?.score_name !== undefined;


export const MAX_DELAY_S = 86_400;

/** What changing a rule needs: the store, and the bus on which pipelines hear that a project's rules changed. */
export interface RuleWrites {
  readonly sql: Sql;
  readonly pubsub: PubSub;
}
/** Tells the pipelines' rule caches that a project's rules changed (they read them again at their next part). */
export const rulesChanged = (deps: RuleWrites, projectId: number) => deps.pubsub.publish(EVALUATION_RULES_CHANNEL, String(projectId));


async function parseQueueAction(sql: Sql, projectId: number, raw: unknown, judged: boolean): Promise<(QueueAction & { queue_name: string }) | null> {
  if (raw === undefined || raw === null) {
    if (!judged) throw new ValidationError({ field: "evaluator_id", message: "a rule needs an evaluator_id, a queue_action, or both" });
    return null;
  }
  if (typeof raw !== "object" || Array.isArray(raw)) throw new ValidationError({ field: "queue_action", message: 'queue_action must be an object like {"queue_id": "…", "below": 0.5}' });
  const a = raw as Record<string, unknown>;
  const queue = typeof a.queue_id === "string" ? await findQueue(sql, projectId, a.queue_id) : undefined;
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
  const rule = await insertRule(sql, projectId, userId, {
    evaluator_id: evaluator?.id ?? null, name: name.trim(), target, filter, sampling, delay_s: delay as number, queue_action: action ? withoutName(action) : null,
  });
  await rulesChanged(deps, projectId);
  await audit(sql, projectId, userId, "evaluation_rule.create", rule.name, { rule_id: rule.id, evaluator_id: rule.evaluator_id, sampling: rule.sampling, target: rule.target });
  return rule;
}


/** Turns a rule on or off (recorded in the project's audit log as `actorId`'s). */
export async function setRuleEnabled(deps: RuleWrites, projectId: number, id: string, enabled: boolean, actorId: number | null): Promise<void> {
  const rule = await ruleWithId(deps.sql, projectId, id);
  await updateRuleEnabled(deps.sql, projectId, id, enabled);
  await rulesChanged(deps, projectId);
  await audit(deps.sql, projectId, actorId, enabled ? "evaluation_rule.enable" : "evaluation_rule.disable", rule.name, { rule_id: rule.id });
}

/** Deletes a rule and its waiting jobs (recorded in the project's audit log as `actorId`'s). */
export async function deleteRule(deps: RuleWrites, projectId: number, id: string, actorId: number | null): Promise<void> {
  const rule = await ruleWithId(deps.sql, projectId, id);
  await deleteRuleRow(deps.sql, projectId, id);
  await rulesChanged(deps, projectId);
  await audit(deps.sql, projectId, actorId, "evaluation_rule.delete", rule.name, { rule_id: rule.id, evaluator_id: rule.evaluator_id });
}


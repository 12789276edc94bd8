/**
 * Rules that fill annotation queues without judging (stores/evaluation/rules.ts): a run that ends and matches a
 * routing rule's filter (runs with errors, say), or a run given a score the rule names with a value that meets its
 * condition (thumbs down: `user_feedback` equals false), is added to the rule's queue — once, however often it is
 * seen (the queue keeps one item per run and span), and within the rule's sample.
 */
import type { RunRecord } from "../../core/events/run.js";
import type { Sql } from "../../core/ports/sql.js";
import { runMatches, sampled } from "../model/rule-filter.js";
import { enabledRulesOf, type EvaluationRule } from "../../stores/evaluation/rules.js";
import { queueActionWants, routesScoredRuns } from "../rules.js";
import { addToQueue } from "../../stores/evaluation/annotation-queue-items.js";

export interface GivenScore {
  readonly run: Readonly<RunRecord>;
  readonly name: string;
  readonly value: number | boolean | string;
}

/** An item one rule adds to its queue. */
export interface RoutedItem {
  readonly project_id: number;
  readonly queue_id: string;
  readonly sdk_run_id: string;
  readonly run_id: string;
  readonly span_id: string;
}

/** The item a routing rule adds for this run (or span). */
export const routedItem = (rule: EvaluationRule, run: Readonly<RunRecord>, spanId: string): RoutedItem => ({
  project_id: rule.project_id, queue_id: rule.queue_action!.queue_id, sdk_run_id: run.external_id, run_id: run.run_id, span_id: spanId,
});

/** Whether a routing rule takes this run: its filter's run fields, then its sample. */
const routeTakes = (rule: EvaluationRule, run: Readonly<RunRecord>): boolean =>
  run.project_id === rule.project_id && runMatches(rule.filter, run) && sampled(rule.id, run.run_id, "", rule.sampling);

/** The items the rules that route given scores add for these scores. */
export function routesOfScores(rules: readonly EvaluationRule[], scores: readonly GivenScore[]): RoutedItem[] {
  const out: RoutedItem[] = [];
  for (const rule of rules) {
    if (!routesScoredRuns(rule)) continue;
    const action = rule.queue_action!;
    for (const s of scores) {
      if (s.name === action.score_name && queueActionWants(action, s.value) && routeTakes(rule, s.run)) out.push(routedItem(rule, s.run, ""));
    }
  }
  return out;
}

/** Adds the items, one insert per queue; how many were new. */
export async function addRouted(sql: Sql, items: readonly RoutedItem[]): Promise<number> {
  const byQueue = new Map<string, RoutedItem[]>();
  for (const i of items) {
    const key = `${i.project_id}\u0000${i.queue_id}`;
    const list = byQueue.get(key);
    if (list) list.push(i);
    else byQueue.set(key, [i]);
  }
  let added = 0;
  for (const list of byQueue.values()) added += await addToQueue(sql, list[0]!.project_id, list[0]!.queue_id, list, "rule");
  return added;
}

/** Routes scores given in one request of a project (the API, the run page): its rules read, the items added. */
export async function routeGivenScores(sql: Sql, projectId: number, scores: readonly GivenScore[]): Promise<number> {
  if (scores.length === 0) return 0;
  const rules = (await enabledRulesOf(sql, [projectId])).filter(routesScoredRuns);
  if (rules.length === 0) return 0;
  return addRouted(sql, routesOfScores(rules, scores));
}

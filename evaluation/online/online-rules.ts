/**
 * Online evaluation in the pipeline (docs/EVALUATION.md, Online rules): turns ended runs (and ended spans) into
 * evaluation jobs. After a part is committed, each run the part ended — and, for span rules, each span it ended — is
 * checked against its project's enabled rules (read through a ProjectCache of RULES_TTL_MS, dropped for a project
 * whose rules changed, on PubSub "evaluation.rules"): the filter's run fields, then the rule's sample (a hash of rule,
 * run and span). A match becomes one job due after the rule's delay; a replayed part makes the same jobs, which the
 * queue keeps once. Workers (evaluation/jobs/worker.ts) are woken on PubSub. Rules without an evaluator route instead
 * (routing.ts): the runs (spans) they take are added to their queue here, and so are runs given, in an event's
 * `payload.scores`, a score a rule names. plugins/online-evaluation.ts adapts this to the plugin chain.
 */
import { runKeyOfEvent, type RunKey } from "../../core/events/run-key.js";
import type { RunRecord } from "../../core/events/run.js";
import type { PipelineEvent } from "../../core/events/schema.js";
import type { PubSub } from "../../core/ports/pubsub.js";
import type { Sql } from "../../core/ports/sql.js";
import { ProjectCache, projectIdOf } from "../../core/project-cache.js";
import { enqueueJobs, type NewJob } from "../../stores/evaluation/jobs.js";
import { enabledRulesOf, type EvaluationRule } from "../../stores/evaluation/rules.js";
import { MAX_SCORES_PER_EVENT } from "../../stores/scores.js";
import { EVALUATION_JOBS_CHANNEL, EVALUATION_RULES_CHANNEL } from "../channels.js";
import { runMatches, sampled, spanMatches, spanOf, spanRunFilter } from "../model/rule-filter.js";
import { routesEndedRuns, routesScoredRuns } from "../rules.js";
import { addRouted, routedItem, routesOfScores, type GivenScore, type RoutedItem } from "./routing.js";

export const RULES_TTL_MS = 5_000;

const ENDS_RUN = new Set(["run_end", "error"]);
const isSpanEnd = (e: PipelineEvent) => (e.event_type === "step" || e.event_type === "tool_call") && e.payload.phase === "end" && Boolean(e.span_id);
const ended = (run: Readonly<RunRecord>) => run.status === "success" || run.status === "error";

/** The well-formed {name, value} scores an event carries (plugins/scores.ts stores them; a rule may route on them). */
const givenScores = (run: Readonly<RunRecord>, list: readonly unknown[]): GivenScore[] =>
  list.slice(0, MAX_SCORES_PER_EVENT).flatMap((item) => {
    if (typeof item !== "object" || item === null) return [];
    const { name, value } = item as { name?: unknown; value?: unknown };
    return typeof name === "string" && ["number", "boolean", "string"].includes(typeof value) ? [{ run, name, value: value as number | boolean | string }] : [];
  });

export interface OnlineEvaluation {
  start(ctx: { readonly sql: Sql; readonly pubsub: PubSub }): Promise<void>;
  /** A committed part's events and its runs (as stored, by key): queues the jobs and routed items they make. */
  afterCommit(events: readonly PipelineEvent[], runOf: (key: RunKey) => Readonly<RunRecord> | undefined): Promise<void>;
  close(): Promise<void>;
}

export function createOnlineEvaluation(opts: { rulesTtlMs?: number } = {}): OnlineEvaluation {
  let ctx: { readonly sql: Sql; readonly pubsub: PubSub } | undefined;
  let unsubscribe: (() => Promise<void>) | undefined;
  const cache = new ProjectCache<number, EvaluationRule[]>({ ttlMs: opts.rulesTtlMs ?? RULES_TTL_MS });

  const rulesOf = (projectIds: readonly number[]) =>
    cache.getMany(projectIds, async (missing) => {
      const fresh = await enabledRulesOf(ctx!.sql, missing);
      return new Map(missing.map((p) => [p, fresh.filter((r) => r.project_id === p)]));
    });

  return {
    async start(c) {
      ctx = c;
      // A rule made or changed applies to the next part, not after the cache's TTL.
      unsubscribe = await cache.invalidateOn(c.pubsub, EVALUATION_RULES_CHANNEL, projectIdOf);
    },
    async close() {
      await unsubscribe?.();
    },
    async afterCommit(events, runOf) {
      if (!ctx) return;
      const candidates = events.filter((e) => !e.duplicate && (ENDS_RUN.has(e.event_type) || isSpanEnd(e) || Array.isArray(e.payload.scores)));
      if (candidates.length === 0) return;
      const rules = await rulesOf([...new Set(candidates.map((e) => e.project_id))]);
      const now = Date.now();
      const jobs: NewJob[] = [];
      const routed: RoutedItem[] = [];
      const given: GivenScore[] = [];
      const seen = new Set<string>();
      for (const e of candidates) {
        const list = rules.get(e.project_id) ?? [];
        if (list.length === 0) continue;
        const run = runOf(runKeyOfEvent(e));
        if (!run) continue;
        if (Array.isArray(e.payload.scores) && list.some(routesScoredRuns)) given.push(...givenScores(run, e.payload.scores));
        if (!ENDS_RUN.has(e.event_type) && !isSpanEnd(e)) continue;
        const spanEnd = isSpanEnd(e);
        for (const rule of list) {
          if (spanEnd !== (rule.target === "span")) continue;
          if (spanEnd) {
            if (!runMatches(spanRunFilter(rule.filter), run) || !spanMatches(rule.filter, spanOf(e.event_type, e.payload))) continue;
          } else if (!ended(run) || !runMatches(rule.filter, run)) continue;
          const spanId = spanEnd ? e.span_id! : "";
          const key = `${rule.id}\u0000${run.run_id}\u0000${spanId}`;
          if (seen.has(key) || !sampled(rule.id, run.run_id, spanId, rule.sampling)) continue;
          seen.add(key);
          if (rule.evaluator_id === null) {
            if (routesEndedRuns(rule)) routed.push(routedItem(rule, run, spanId));
            continue;
          }
          jobs.push({ project_id: run.project_id, rule_id: rule.id, evaluator_id: rule.evaluator_id, sdk_run_id: run.external_id, run_id: run.run_id, span_id: spanId, due_at: new Date(now + rule.delay_s * 1000) });
        }
      }
      if (given.length) routed.push(...routesOfScores([...rules.values()].flat(), given));
      if (routed.length) await addRouted(ctx.sql, routed);
      if (jobs.length === 0) return;
      const added = await enqueueJobs(ctx.sql, jobs);
      if (added > 0) await ctx.pubsub.publish(EVALUATION_JOBS_CHANNEL, String(added));
    },
  };
}

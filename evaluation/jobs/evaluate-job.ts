/**
 * One claimed evaluation job, start to end (docs/EVALUATION.md, Online rules): read the evaluator version, the rule
 * and the judged run; skip what no longer exists or does not match the rule's metadata and tags; evaluate, through
 * the project's caps (evaluation/judging/judge-caps.ts: a job they refuse is held — a spent daily budget until
 * tomorrow, a used-up rate until its window resets — with no attempt counted) and its keys (a project that may not
 * use the operator's keys and has none of its own fails the job, saying so); then store the score under the job's
 * fixed score id, report the judge call's own run, and add the run to an annotation queue when the rule says so. A
 * provider outage retries with backoff; a malformed answer fails the job (an evaluation error, counted by the
 * evaluation_failure_rate_above alert), never a score.
 */
import type { EventStore } from "../../core/ports/event-store.js";
import type { EventLog } from "../../core/ports/event-log.js";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { RateLimiter } from "../../core/ports/rate-limiter.js";
import type { Sql } from "../../core/ports/sql.js";
import type { PubSub } from "../../core/ports/pubsub.js";
import type { Logger } from "../../core/logger.js";
import { appendEvents } from "../../core/log/events.js";
import { insertScoreRows, scoreRow } from "../../stores/scores.js";
import { projectOwner } from "../../stores/accounts/projects.js";
import { ProjectCache } from "../../core/project-cache.js";
import { announceExperimentScores } from "../../core/pubsub/experiment-scores.js";
import { addToQueue } from "../../stores/evaluation/annotation-queue-items.js";
import { evaluate, type JudgeCall } from "../judging/evaluate.js";
import { findEvaluator } from "../../stores/evaluation/evaluators.js";
import { finishJob, retryJob, type ClaimedJob, type JobStatus } from "../../stores/evaluation/jobs.js";
import { judgeRunId, judgeTraceEvents } from "../judging/judge-trace.js";
import { runMetadataMatches } from "../model/rule-filter.js";
import { findRule } from "../../stores/evaluation/rules.js";
import { queueActionWants } from "../rules.js";
import { projectJudge, withProjectKeys } from "../judging/project-judge.js";
import { openProviderKeys } from "../../stores/evaluation/provider-keys.js";
import type { Sealer } from "../../core/sealed.js";
import { BUDGET_SPENT, RATE_LIMITED, cappedJudge, type JudgeCapsDeps } from "../judging/judge-caps.js";
import { mayUseOperatorKey, type OperatorKeyPolicy } from "../judging/operator-key.js";
import type { LoggedEvent } from "../../core/events/schema.js";
import type { BatchedWrite } from "./batched-writes.js";
import { runSubject } from "../judging/subjects.js";

export interface JobDeps {
  readonly sql: Sql;
  readonly clickhouse: ClickHouse;
  readonly events: EventStore;
  readonly log: Pick<EventLog, "append">;
  readonly limiter: RateLimiter;
  readonly judge: JudgeCall;
  /** Opens the projects' own provider keys (stores/evaluation/provider-keys.ts). */
  readonly sealer: Sealer;
  /** Which projects may use agents-service's own keys (RUNWATCH_OPERATOR_JUDGE_KEY). */
  readonly operator: OperatorKeyPolicy;
  /** agents-service's defaults, to price a judge call before it is made (core/agents/judge-estimate.ts). */
  readonly defaults: JudgeCapsDeps["defaults"];
  /** The instance's judge caps (config.evaluationCaps). */
  readonly caps: JudgeCapsDeps["caps"];
  readonly logger: Logger;
  /** Backoff after a failed attempt n (1, 2, …), in ms. */
  readonly backoffMs: (attempt: number) => number;
  /** What a worker reads for every job, kept between jobs (jobCache()). */
  readonly cache?: JobCache;
  /** How score rows and judge runs' events are stored (batchedWrites); default one write per job. */
  readonly writeScores?: BatchedWrite<Record<string, unknown>>;
  readonly appendEvents?: BatchedWrite<LoggedEvent>;
  /** Where a score given to an experiment's run is announced to open comparisons; none: not announced. */
  readonly pubsub?: Pick<PubSub, "publish">;
}

/**
 * Reads a worker repeats for most jobs: an evaluator version never changes (kept for good, a few hundred at most); a
 * rule may be turned off, and a project's provider keys or its permission to use the operator's changed (each kept
 * RECENT_MS: a change applies within 5 s; a
 * rule's waiting jobs run either way). The caps are read for every call: a cap set now applies to the next call.
 */
export interface JobCache {
  readonly evaluators: ProjectCache<string, ReturnType<typeof findEvaluator>>;
  readonly rules: ProjectCache<string, ReturnType<typeof findRule>>;
  readonly keys: ProjectCache<number, ReturnType<typeof openProviderKeys>>;
  readonly operatorKey: ProjectCache<number, Promise<boolean>>;
  /** Whose name a project's judge runs are sent under: its owner (owners rarely change). */
  readonly owners: ProjectCache<number, Promise<number>>;
}
const RECENT_MS = 5_000;
const MAX_CACHED = 500;
export const jobCache = (): JobCache => ({
  evaluators: new ProjectCache({ ttlMs: Infinity, maxEntries: MAX_CACHED }),
  rules: new ProjectCache({ ttlMs: RECENT_MS, maxEntries: MAX_CACHED }),
  keys: new ProjectCache({ ttlMs: RECENT_MS, maxEntries: MAX_CACHED }),
  operatorKey: new ProjectCache({ ttlMs: RECENT_MS, maxEntries: MAX_CACHED }),
  owners: new ProjectCache({ ttlMs: Infinity, maxEntries: MAX_CACHED }),
});

function readsOf(deps: JobDeps, job: ClaimedJob) {
  const { sql, cache } = deps;
  const evaluator = () => findEvaluator(sql, job.project_id, job.evaluator_id, job.evaluator_version);
  const rule = () => findRule(sql, job.project_id, job.rule_id);
  if (!cache) return { evaluator: evaluator(), rule: rule() };
  return {
    evaluator: cache.evaluators.get(`${job.project_id}:${job.evaluator_id}:${job.evaluator_version}`, evaluator),
    rule: cache.rules.get(job.rule_id, rule),
  };
}

/** The project's judge: its own provider keys or the operator's (evaluation/judging/project-judge.ts), within its caps. */
async function judgeOf(deps: JobDeps, projectId: number): Promise<JudgeCall> {
  const capped = cappedJudge(deps, projectId, deps.judge);
  if (!deps.cache) return projectJudge(deps, projectId, capped);
  const [keys, operatorKey] = await Promise.all([
    deps.cache.keys.get(projectId, () => openProviderKeys(deps.sql, deps.sealer, projectId)),
    deps.cache.operatorKey.get(projectId, () => mayUseOperatorKey(deps.sql, deps.operator, projectId)),
  ]);
  return withProjectKeys(capped, keys, operatorKey);
}

/** Whose name the judge run is sent under: the project's owner (or, for a project without one, its id). */
const ownerOf = async (sql: Sql, projectId: number): Promise<number> => (await projectOwner(sql, projectId))?.owner_id ?? projectId;

export async function runJob(deps: JobDeps, job: ClaimedJob): Promise<JobStatus> {
  const { sql } = deps;
  const reads = readsOf(deps, job);
  const [evaluator, rule] = await Promise.all([reads.evaluator, reads.rule]);
  if (!evaluator || !rule) {
    await finishJob(sql, job.id, "skipped", { error: "the evaluator or the rule was deleted" });
    return "skipped";
  }
  const run = await deps.events.getRun(job.project_id, job.sdk_run_id);
  if (!run) {
    await finishJob(sql, job.id, "skipped", { error: "the run no longer exists" });
    return "skipped";
  }
  const def = evaluator.definition;
  const subject = await runSubject({ events: deps.events, sql }, run, { ...(job.span_id ? { spanId: job.span_id } : {}), evaluator: def });
  if (!runMetadataMatches(rule.filter, subject.metadata)) {
    await finishJob(sql, job.id, "skipped", { error: "the run's metadata or tags do not match the rule" });
    return "skipped";
  }
  const startedMs = Date.now();
  const judge = def.type === "llm_judge" ? await judgeOf(deps, job.project_id) : deps.judge;
  const outcome = await evaluate(def, subject, judge);
  // Refused by the caps before any provider call: held, no attempt counted.
  if (outcome.error?.code === RATE_LIMITED || outcome.error?.code === BUDGET_SPENT) {
    return retryJob(sql, job, outcome.error.message, (outcome.error.retry_after_s ?? 60) * 1000 + 100, { countAttempt: false });
  }
  // The judge call's own run is reported once the score is stored (its end on the dashboard means the score is there),
  // and before the job is finished: a worker that dies in between runs the job again, and reports it again, once.
  const reportJudgeRun = async () => {
    if (outcome.model === null) return;
    const sender = { projectId: job.project_id, userId: await (deps.cache ? deps.cache.owners.get(job.project_id, () => ownerOf(sql, job.project_id)) : ownerOf(sql, job.project_id)) };
    const judged = { scoreId: job.score_id, evaluator: { id: evaluator.id, name: evaluator.name, version: evaluator.version }, sdk_run_id: job.sdk_run_id, span_id: job.span_id };
    const events = judgeTraceEvents(sender, judged, outcome, startedMs);
    await (deps.appendEvents ? deps.appendEvents(events) : appendEvents(deps.log, events));
  };
  if (outcome.error) {
    await reportJudgeRun();
    if (outcome.error.retryable) {
      const wait = Math.max(deps.backoffMs(job.attempts), (outcome.error.retry_after_s ?? 0) * 1000);
      const status = await retryJob(sql, job, `${outcome.error.code}: ${outcome.error.message}`, wait, { cost_usd: outcome.cost_usd });
      deps.logger.info("evaluation will be retried", { job_id: job.id, attempt: job.attempts, status, error: outcome.error.code });
      return status;
    }
    await finishJob(sql, job.id, "failed", { error: `${outcome.error.code}: ${outcome.error.message}`, cost_usd: outcome.cost_usd });
    return "failed";
  }
  const verdict = outcome.verdict!;
  const score = {
    sdk_run_id: run.external_id,
    ...(job.span_id ? { span_id: job.span_id } : {}),
    name: def.score_name,
    value: verdict.value,
    comment: verdict.explanation,
    source: def.type === "llm_judge" ? ("llm_judge" as const) : ("check" as const),
  };
  const origin = { evaluator_id: evaluator.id, evaluator_version: evaluator.version, judge_run: outcome.model !== null ? judgeRunId(job.score_id) : "" };
  const row = scoreRow(run, score, job.score_id, new Date().toISOString(), origin);
  await (deps.writeScores ? deps.writeScores([row]) : insertScoreRows(deps.clickhouse, [row]));
  if (deps.pubsub) await announceExperimentScores(deps.pubsub, job.project_id, [run]);
  if (rule.queue_action && queueActionWants(rule.queue_action, verdict.value)) {
    await addToQueue(sql, job.project_id, rule.queue_action.queue_id, [{ sdk_run_id: run.external_id, run_id: run.run_id, span_id: job.span_id }], "rule");
  }
  await reportJudgeRun();
  await finishJob(sql, job.id, "done", { cost_usd: outcome.cost_usd });
  return "done";
}

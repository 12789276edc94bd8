/**
 * Backfill (docs/EVALUATION.md): a rule applied to the project's runs (or spans) that ended in a past time range —
 * the rule's filter read in ClickHouse, its sample taken by the same hash as online, at most MAX_BACKFILL_RUNS. A
 * judging rule's sample becomes jobs; a routing rule's is added to its queue.
 * Without `confirm` it only counts and estimates the cost: the evaluator's mean cost per call so far, or, before its
 * first call, the judge model's price for the template and a typical run.
 */
import { ValidationError } from "../../core/errors.js";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { Sql } from "../../core/ports/sql.js";
import type { PubSub } from "../../core/ports/pubsub.js";
import { enqueueJobs, type NewJob } from "../../stores/evaluation/jobs.js";
import { EVALUATION_JOBS_CHANNEL } from "../channels.js";
import { endedRuns, endedSpanEvents, type BackfillRange, type BackfillTarget } from "../../stores/evaluation/backfill-reads.js";
import { sampled, spanMatches, spanOf, spanRunFilter } from "../model/rule-filter.js";
import { addToQueue } from "../../stores/evaluation/annotation-queue-items.js";
import type { EvaluationRule } from "../../stores/evaluation/rules.js";

/** The runs (or spans) a backfill takes at most. */
export const MAX_BACKFILL_RUNS = 100_000;
/** The span events a span backfill reads at most (a start and an end per span). */
const MAX_BACKFILL_SPAN_EVENTS = 3 * MAX_BACKFILL_RUNS;
export const MAX_BACKFILL_DAYS = 366;

export type { BackfillRange, BackfillTarget } from "../../stores/evaluation/backfill-reads.js";

export function parseRange(body: Record<string, unknown>): BackfillRange {
  const at = (field: "from" | "to") => {
    const v = body[field];
    const ms = typeof v === "string" ? Date.parse(v) : NaN;
    if (!Number.isFinite(ms)) throw new ValidationError({ field, message: `${field} must be an ISO 8601 time such as 2026-11-01T00:00:00Z` });
    return ms;
  };
  const from = at("from");
  const to = at("to");
  if (to <= from) throw new ValidationError({ field: "to", message: "to must be after from" });
  if (to - from > MAX_BACKFILL_DAYS * 86_400_000) throw new ValidationError({ field: "to", message: `a backfill covers at most ${MAX_BACKFILL_DAYS} days` });
  return { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
}


/**
 * The spans that ended in the range, of runs that pass the rule's run filter (as online: without the fields only an
 * ended run has), whose kind and name pass its span fields. Read from the end events' cut payloads (span_payload).
 */
async function endedSpans(ch: ClickHouse, rule: EvaluationRule, range: BackfillRange): Promise<BackfillTarget[]> {
  const rows = await endedSpanEvents(ch, rule.project_id, spanRunFilter(rule.filter), range, MAX_BACKFILL_SPAN_EVENTS);
  const seen = new Set<string>();
  const out: BackfillTarget[] = [];
  for (const r of rows) {
    const key = `${r.run_id}\u0000${r.span_id}`;
    if (seen.has(key)) continue;
    let payload: Record<string, unknown>;
    try {
      payload = JSON.parse(r.p) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (payload.phase !== "end" || !spanMatches(rule.filter, spanOf(r.event_type, payload))) continue;
    seen.add(key);
    out.push({ sdk_run_id: r.sdk_run_id, run_id: r.run_id, span_id: r.span_id });
    if (out.length >= MAX_BACKFILL_RUNS) break;
  }
  return out;
}

/** The runs (or spans) of the range that pass the rule's filter, and the rule's sample of them (the hash online uses). */
export async function backfillTargets(ch: ClickHouse, rule: EvaluationRule, range: BackfillRange): Promise<{ matching: number; sample: BackfillTarget[] }> {
  const all = rule.target === "span" ? await endedSpans(ch, rule, range) : await endedRuns(ch, rule.project_id, rule.filter, range, MAX_BACKFILL_RUNS);
  return { matching: all.length, sample: all.filter((t) => sampled(rule.id, t.run_id, t.span_id, rule.sampling)) };
}

/** Queues the sample as backfill jobs, due now, and wakes the workers; a rule without an evaluator adds it to its queue. */
export async function queueBackfill(deps: { sql: Sql; pubsub: PubSub }, rule: EvaluationRule, sample: readonly BackfillTarget[]): Promise<number> {
  const { sql } = deps;
  const evaluatorId = rule.evaluator_id;
  if (evaluatorId === null) {
    const queueId = rule.queue_action!.queue_id;
    let added = 0;
    for (let i = 0; i < sample.length; i += 5_000) added += await addToQueue(sql, rule.project_id, queueId, sample.slice(i, i + 5_000), "rule");
    return added;
  }
  const now = new Date();
  let queued = 0;
  for (let i = 0; i < sample.length; i += 5_000) {
    const jobs: NewJob[] = sample.slice(i, i + 5_000).map((r) => ({
      project_id: rule.project_id, rule_id: rule.id, evaluator_id: evaluatorId, sdk_run_id: r.sdk_run_id, run_id: r.run_id, span_id: r.span_id, due_at: now,
    }));
    queued += await enqueueJobs(sql, jobs, "backfill");
  }
  await deps.pubsub.publish(EVALUATION_JOBS_CHANNEL, String(queued));
  return queued;
}

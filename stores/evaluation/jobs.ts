/**
 * The evaluation job queue in Postgres (evaluation_jobs, migration 109), the same in both modes: one job per rule
 * and judged run (or span), made by the pipeline when a run ends (online) or by a backfill. Workers claim due jobs
 * with FOR UPDATE SKIP LOCKED and a lease, as the notification queue: a worker that dies mid-job leaves it to be
 * claimed again when the lease ends (at least once), and the job's fixed score id makes a second run write the same
 * score row (once in effect).
 */
import { nameUuid } from "../../core/ids.js";
import type { Sql } from "../../core/ports/sql.js";

export type JobStatus = "pending" | "retrying" | "done" | "failed" | "skipped";
export type JobOrigin = "online" | "backfill";

export interface NewJob {
  readonly project_id: number;
  readonly rule_id: string;
  readonly evaluator_id: string;
  readonly sdk_run_id: string;
  readonly run_id: string;
  readonly span_id: string;
  /** When the job is due: the run's end plus the rule's delay. */
  readonly due_at: Date;
}

export interface ClaimedJob extends Omit<NewJob, "due_at"> {
  readonly id: number;
  readonly evaluator_version: number;
  readonly origin: JobOrigin;
  readonly attempts: number;
  readonly max_attempts: number;
  readonly score_id: string;
}

/** The score a job writes: named by its rule, run and span, so it is the same row however often it is written. */
export const scoreIdOf = (ruleId: string, runId: string, spanId: string): string => nameUuid(`runwatch:evaluation:${ruleId}:${runId}:${spanId}`);

/** Queues jobs at the evaluators' latest versions; a rule's job for a run it already has is left as it is. Returns how many were new. */
export async function enqueueJobs(sql: Sql, jobs: readonly NewJob[], origin: JobOrigin = "online"): Promise<number> {
  if (jobs.length === 0) return 0;
  const rows = await sql.query<{ id: number }>(
    `INSERT INTO evaluation_jobs (project_id, rule_id, evaluator_id, evaluator_version, sdk_run_id, run_id, span_id, origin, next_attempt_at, score_id)
     SELECT j.project_id, j.rule_id, j.evaluator_id, e.latest_version, j.sdk_run_id, j.run_id, j.span_id, $9, j.due_at, j.score_id
       FROM unnest($1::bigint[], $2::uuid[], $3::uuid[], $4::text[], $5::uuid[], $6::text[], $7::timestamptz[], $8::uuid[])
            AS j(project_id, rule_id, evaluator_id, sdk_run_id, run_id, span_id, due_at, score_id)
       JOIN evaluators e ON e.id = j.evaluator_id
     ON CONFLICT (rule_id, run_id, span_id) DO NOTHING
     RETURNING id`,
    [
      jobs.map((j) => j.project_id), jobs.map((j) => j.rule_id), jobs.map((j) => j.evaluator_id), jobs.map((j) => j.sdk_run_id),
      jobs.map((j) => j.run_id), jobs.map((j) => j.span_id), jobs.map((j) => j.due_at.toISOString()),
      jobs.map((j) => scoreIdOf(j.rule_id, j.run_id, j.span_id)), origin,
    ],
  );
  return rows.length;
}

const JOB_COLUMNS = "id, project_id, rule_id, evaluator_id, evaluator_version, sdk_run_id, run_id, span_id, origin, attempts, max_attempts, score_id";
const toJob = (r: Record<string, unknown>): ClaimedJob => ({
  id: Number(r.id), project_id: Number(r.project_id), rule_id: String(r.rule_id), evaluator_id: String(r.evaluator_id),
  evaluator_version: Number(r.evaluator_version), sdk_run_id: String(r.sdk_run_id), run_id: String(r.run_id), span_id: String(r.span_id),
  origin: r.origin as JobOrigin, attempts: Number(r.attempts), max_attempts: Number(r.max_attempts), score_id: String(r.score_id),
});

/**
 * Claims up to `limit` due jobs (of `projects` only, when given) for `leaseSeconds`, counting the attempt — fairly
 * across projects, as the pipeline's lanes share the log. Each project's due jobs are ranked in their own order (due
 * time, then id) after the jobs it has running now (leased, not finished): a project's k-th due job has the turn
 * running + k, and the claim takes the lowest turns first. A project with thousands of jobs queued and a worker's
 * every slot busy then waits behind another project's single job, which is claimed at the next free slot instead of
 * after the whole backlog. Claimed one at a time (as a worker does when a slot frees), projects alternate.
 *
 * The cost follows the projects with waiting jobs, not the jobs: `waiting` walks them one index probe each
 * (evaluation_jobs_waiting_idx), each project's first due jobs come from that index, and its running ones from
 * evaluation_jobs_leased_idx. Each project offers twice `limit` candidates, so rows another worker is claiming this
 * very moment (skipped, not waited for) leave this claim others to take.
 */
export async function claimJobs(sql: Sql, limit: number, leaseSeconds: number, projects?: readonly number[]): Promise<ClaimedJob[]> {
  const rows = await sql.query<Record<string, unknown>>(
    `WITH RECURSIVE waiting (project_id) AS (
       SELECT min(project_id) FROM evaluation_jobs WHERE status IN ('pending', 'retrying')
       UNION ALL
       SELECT (SELECT min(project_id) FROM evaluation_jobs WHERE status IN ('pending', 'retrying') AND project_id > w.project_id)
         FROM waiting w WHERE w.project_id IS NOT NULL
     )
     UPDATE evaluation_jobs j SET locked_until = now() + make_interval(secs => $2::double precision), attempts = j.attempts + 1
     FROM (SELECT e.id FROM evaluation_jobs e
           JOIN (SELECT d.id, r.running + d.turn AS turn, d.next_attempt_at
                   FROM waiting w
                   CROSS JOIN LATERAL (
                     SELECT count(*) AS running FROM evaluation_jobs
                      WHERE project_id = w.project_id AND locked_until >= now() AND status IN ('pending', 'retrying')) r
                   CROSS JOIN LATERAL (
                     SELECT id, next_attempt_at, row_number() OVER (ORDER BY next_attempt_at, id) AS turn
                       FROM evaluation_jobs
                      WHERE project_id = w.project_id AND status IN ('pending', 'retrying') AND next_attempt_at <= now()
                        AND (locked_until IS NULL OR locked_until < now())
                      ORDER BY next_attempt_at, id LIMIT 2 * $1) d
                  WHERE w.project_id IS NOT NULL AND ($3::bigint[] IS NULL OR w.project_id = ANY($3::bigint[]))) ranked ON ranked.id = e.id
           WHERE e.status IN ('pending', 'retrying') AND (e.locked_until IS NULL OR e.locked_until < now())
           ORDER BY ranked.turn, ranked.next_attempt_at, ranked.id
           LIMIT $1 FOR UPDATE OF e SKIP LOCKED) due
     WHERE j.id = due.id
     RETURNING ${JOB_COLUMNS.split(", ").map((c) => `j.${c}`).join(", ")}`,
    [limit, leaseSeconds, projects ? [...projects] : null],
  );
  return rows.map(toJob);
}

/** A job's outcome: done (a score was written), skipped (nothing to judge), failed (an evaluation error). */
export async function finishJob(sql: Sql, id: number, status: "done" | "skipped" | "failed", outcome: { error?: string; cost_usd?: number } = {}): Promise<void> {
  await sql.query(
    `UPDATE evaluation_jobs SET status = $2, last_error = $3, cost_usd = cost_usd + $4, finished_at = now(), locked_until = NULL WHERE id = $1`,
    [id, status, (outcome.error ?? "").slice(0, 2_000), outcome.cost_usd ?? 0],
  );
}

/** Tries the job again after `delayMs` (an outage, a cap); fails it once its attempts are used up. Returns its status. */
export async function retryJob(sql: Sql, job: ClaimedJob, error: string, delayMs: number, opts: { countAttempt?: boolean; cost_usd?: number } = {}): Promise<JobStatus> {
  const countAttempt = opts.countAttempt ?? true;
  if (countAttempt && job.attempts >= job.max_attempts) {
    await finishJob(sql, job.id, "failed", { error: `${error} (gave up after ${job.attempts} attempts)`, cost_usd: opts.cost_usd });
    return "failed";
  }
  await sql.query(
    `UPDATE evaluation_jobs SET status = 'retrying', last_error = $2, next_attempt_at = now() + make_interval(secs => $3::double precision),
            locked_until = NULL, attempts = attempts - $4::int, cost_usd = cost_usd + $5 WHERE id = $1`,
    [job.id, error.slice(0, 2_000), delayMs / 1000, countAttempt ? 0 : 1, opts.cost_usd ?? 0],
  );
  return "retrying";
}

/** Jobs waiting (pending or retrying), and how many of them are due now: /healthz's evaluation backlog. */
export async function evaluationBacklog(sql: Sql): Promise<{ waiting: number; due: number; retrying: number }> {
  const [row] = await sql.query<Record<string, unknown>>(
    `SELECT count(*) AS waiting, count(*) FILTER (WHERE next_attempt_at <= now()) AS due, count(*) FILTER (WHERE status = 'retrying') AS retrying
       FROM evaluation_jobs WHERE status IN ('pending', 'retrying')`,
  );
  return { waiting: Number(row?.waiting ?? 0), due: Number(row?.due ?? 0), retrying: Number(row?.retrying ?? 0) };
}

/** Of the project's jobs finished since `since` (of one evaluator, when given): how many failed and how many ended at all. */
export async function jobOutcomes(sql: Sql, projectId: number, since: Date, evaluatorId?: string): Promise<{ failed: number; finished: number }> {
  const [row] = await sql.query<Record<string, unknown>>(
    `SELECT count(*) FILTER (WHERE status = 'failed') AS failed, count(*) FILTER (WHERE status IN ('done', 'failed')) AS finished
       FROM evaluation_jobs WHERE project_id = $1 AND finished_at >= $2 AND ($3::uuid IS NULL OR evaluator_id = $3::uuid)`,
    [projectId, since.toISOString(), evaluatorId ?? null],
  );
  return { failed: Number(row?.failed ?? 0), finished: Number(row?.finished ?? 0) };
}

export interface JobRow {
  readonly id: number;
  readonly sdk_run_id: string;
  readonly span_id: string;
  readonly status: JobStatus;
  readonly origin: JobOrigin;
  readonly attempts: number;
  readonly evaluator_version: number;
  readonly last_error: string;
  readonly cost_usd: number;
  readonly score_id: string;
  readonly created_at: string;
  readonly finished_at: string | null;
}

export type JobTotals = Record<JobStatus, number> & { cost_usd: number };

/** The project's evaluators' job counts by status and their cost, by evaluator id (all of them zero for one with no job). */
export async function jobTotals(sql: Sql, projectId: number, evaluatorIds: readonly string[]): Promise<Map<string, JobTotals>> {
  const rows = await sql.query<Record<string, unknown>>(
    `SELECT evaluator_id, count(*) FILTER (WHERE status = 'pending') AS pending, count(*) FILTER (WHERE status = 'retrying') AS retrying,
            count(*) FILTER (WHERE status = 'done') AS done, count(*) FILTER (WHERE status = 'failed') AS failed,
            count(*) FILTER (WHERE status = 'skipped') AS skipped, coalesce(sum(cost_usd), 0) AS cost_usd
       FROM evaluation_jobs WHERE project_id = $1 AND evaluator_id = ANY($2::uuid[]) GROUP BY evaluator_id`,
    [projectId, [...evaluatorIds]],
  );
  const found = new Map(rows.map((t) => [String(t.evaluator_id), t]));
  return new Map(evaluatorIds.map((id) => {
    const t = found.get(id);
    return [id, {
      pending: Number(t?.pending ?? 0), retrying: Number(t?.retrying ?? 0), done: Number(t?.done ?? 0), failed: Number(t?.failed ?? 0),
      skipped: Number(t?.skipped ?? 0), cost_usd: Number(t?.cost_usd ?? 0),
    }];
  }));
}

/** An evaluator's latest jobs (its page), and its totals. */
export async function evaluatorJobs(sql: Sql, projectId: number, evaluatorId: string, limit = 50): Promise<{ jobs: JobRow[]; totals: JobTotals }> {
  const rows = await sql.query<Record<string, unknown>>(
    `SELECT id, sdk_run_id, span_id, status, origin, attempts, evaluator_version, last_error, cost_usd, score_id, created_at, finished_at
       FROM evaluation_jobs WHERE project_id = $1 AND evaluator_id = $2 ORDER BY id DESC LIMIT $3`,
    [projectId, evaluatorId, limit],
  );
  return {
    jobs: rows.map((r) => ({
      id: Number(r.id), sdk_run_id: String(r.sdk_run_id), span_id: String(r.span_id), status: r.status as JobStatus, origin: r.origin as JobOrigin,
      attempts: Number(r.attempts), evaluator_version: Number(r.evaluator_version), last_error: String(r.last_error), cost_usd: Number(r.cost_usd),
      score_id: String(r.score_id), created_at: new Date(r.created_at as string).toISOString(), finished_at: r.finished_at ? new Date(r.finished_at as string).toISOString() : null,
    })),
    totals: (await jobTotals(sql, projectId, [evaluatorId])).get(evaluatorId)!,
  };
}

/** The evaluator's mean cost per judge call so far, and over how many calls. */
export async function meanJudgeCost(sql: Sql, evaluatorId: string): Promise<{ mean: number; calls: number }> {
  const [row] = await sql.query<Record<string, unknown>>(
    `SELECT count(*) AS calls, coalesce(avg(cost_usd), 0) AS mean FROM (SELECT cost_usd FROM evaluation_jobs WHERE evaluator_id = $1 AND status IN ('done', 'failed') AND cost_usd > 0 ORDER BY id DESC LIMIT 1000) recent`,
    [evaluatorId],
  );
  return { mean: Number(row?.mean ?? 0), calls: Number(row?.calls ?? 0) };
}

/**
 * The background work of a prompt page's "Run experiment" (Postgres migration 211; docs/PROMPTS.md, Experiments over
 * prompt versions): one row per experiment it fills, with its progress. Workers in any number of processes share the
 * rows: a claim takes a row whose lease is free (FOR UPDATE SKIP LOCKED) and holds it for `leaseSeconds`, renewed by
 * each progress write; a row whose process ended is claimed again once its lease runs out and resumes, until
 * MAX_ATTEMPTS claims, after which it is failed with a message saying why.
 */
import { NotFound } from "../core/errors.js";
import { isUuid } from "../core/ids.js";
import type { Sql } from "../core/ports/sql.js";

export const PROMPT_EXPERIMENT_STATUSES = ["queued", "running", "completed", "stopped", "failed"] as const;
export type PromptExperimentStatus = (typeof PROMPT_EXPERIMENT_STATUSES)[number];
/** Claims of one job before it is given up: a job that ended its process this often would end the next one too. */
export const MAX_ATTEMPTS = 3;

export interface PromptExperimentJob {
  readonly experiment_id: string;
  readonly project_id: number;
  readonly prompt_name: string;
  readonly prompt_version: number;
  readonly created_by: number | null;
  readonly status: PromptExperimentStatus;
  /** Item × repetition runs to make, those made (a failed one included) and those that failed. */
  readonly total: number;
  readonly done: number;
  readonly failed: number;
  /** Why the job stopped or failed; "" otherwise. */
  readonly message: string;
  readonly attempts: number;
  readonly created_at: string;
  readonly updated_at: string;
}

const iso = (v: unknown) => new Date(v as string).toISOString();
const toJob = (r: Record<string, unknown>): PromptExperimentJob => ({
  experiment_id: String(r.experiment_id), project_id: Number(r.project_id), prompt_name: String(r.prompt_name),
  prompt_version: Number(r.prompt_version), created_by: r.created_by === null ? null : Number(r.created_by),
  status: r.status as PromptExperimentStatus, total: Number(r.total), done: Number(r.done), failed: Number(r.failed),
  message: String(r.message), attempts: Number(r.attempts), created_at: iso(r.created_at), updated_at: iso(r.updated_at),
});

export async function insertPromptExperimentJob(
  sql: Sql, job: { experimentId: string; projectId: number; promptName: string; promptVersion: number; createdBy: number; total: number },
): Promise<PromptExperimentJob> {
  const [row] = await sql.query<Record<string, unknown>>(
    `INSERT INTO prompt_experiment_jobs (experiment_id, project_id, prompt_name, prompt_version, created_by, total)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [job.experimentId, job.projectId, job.promptName, job.promptVersion, job.createdBy, job.total],
  );
  return toJob(row!);
}

/** The job that fills an experiment of the project; NotFound for another project's or none. */
export async function promptExperimentJob(sql: Sql, projectId: number, experimentId: string): Promise<PromptExperimentJob> {
  const rows = isUuid(experimentId)
    ? await sql.query<Record<string, unknown>>("SELECT * FROM prompt_experiment_jobs WHERE project_id = $1 AND experiment_id = $2", [projectId, experimentId])
    : [];
  if (!rows[0]) throw new NotFound({ resource: "experiment", message: `no experiment run from a prompt page with id ${JSON.stringify(experimentId)}` });
  return toJob(rows[0]);
}

/** The jobs of a prompt, newest first (its page shows their progress). */
export async function promptExperimentJobs(sql: Sql, projectId: number, promptName: string, limit = 20): Promise<PromptExperimentJob[]> {
  const rows = await sql.query<Record<string, unknown>>(
    "SELECT * FROM prompt_experiment_jobs WHERE project_id = $1 AND prompt_name = $2 ORDER BY created_at DESC LIMIT $3",
    [projectId, promptName, limit],
  );
  return rows.map(toJob);
}

/**
 * Claims up to `limit` jobs whose lease is free (queued, or running in a process that ended) and marks them running;
 * a job already claimed MAX_ATTEMPTS times is failed instead, saying so.
 */
export async function claimPromptExperimentJobs(sql: Sql, limit: number, leaseSeconds: number, projects?: readonly number[]): Promise<PromptExperimentJob[]> {
  await sql.query(
    `UPDATE prompt_experiment_jobs SET status = 'failed', locked_until = NULL, updated_at = now(),
       message = 'the process running this experiment ended ' || attempts || ' times before it finished; the results made are kept'
     WHERE status = 'running' AND attempts >= $1 AND locked_until < now() AND ($2::bigint[] IS NULL OR project_id = ANY($2::bigint[]))`,
    [MAX_ATTEMPTS, projects ?? null],
  );
  const rows = await sql.query<Record<string, unknown>>(
    `UPDATE prompt_experiment_jobs j SET status = 'running', attempts = j.attempts + 1, updated_at = now(),
       locked_until = now() + make_interval(secs => $2::double precision)
     FROM (SELECT experiment_id FROM prompt_experiment_jobs
           WHERE status IN ('queued', 'running') AND (locked_until IS NULL OR locked_until < now())
             AND ($3::bigint[] IS NULL OR project_id = ANY($3::bigint[]))
           ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED) due
     WHERE j.experiment_id = due.experiment_id RETURNING j.*`,
    [limit, leaseSeconds, projects ?? null],
  );
  return rows.map(toJob);
}

/** Records progress and renews the lease. */
export async function recordProgress(sql: Sql, experimentId: string, p: { done: number; failed: number }, leaseSeconds: number): Promise<void> {
  await sql.query(
    `UPDATE prompt_experiment_jobs SET done = $2, failed = $3, updated_at = now(), locked_until = now() + make_interval(secs => $4::double precision)
     WHERE experiment_id = $1 AND status = 'running'`,
    [experimentId, p.done, p.failed, leaseSeconds],
  );
}

/** Ends a job: completed, stopped (e.g. the budget is spent) or failed, with why. */
export async function finishPromptExperimentJob(sql: Sql, experimentId: string, status: "completed" | "stopped" | "failed", message: string): Promise<void> {
  await sql.query(
    "UPDATE prompt_experiment_jobs SET status = $2, message = $3, locked_until = NULL, updated_at = now() WHERE experiment_id = $1",
    [experimentId, status, message.slice(0, 2_000)],
  );
}

/**
 * Hands a running job back when its process stops on purpose: any worker may take it at once, and the claim this
 * process made is not counted against MAX_ATTEMPTS.
 */
export async function releasePromptExperimentJob(sql: Sql, experimentId: string): Promise<void> {
  await sql.query(
    "UPDATE prompt_experiment_jobs SET locked_until = NULL, attempts = greatest(attempts - 1, 0), updated_at = now() WHERE experiment_id = $1 AND status = 'running'",
    [experimentId],
  );
}

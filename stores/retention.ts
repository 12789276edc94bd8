/**
 * Data retention: a user's retention in days (Postgres project_settings.retention_days; NULL = keep forever, the
 * default) and the sweep that deletes their runs whose last activity is older than that — in ClickHouse every row of
 * the run (stores/runs/expired-runs.ts), in Postgres the run's human-input answers and start record.
 * Runs: `runwatch retention apply` (now), and the pipeline role hourly under a lease (pipeline/retention-sweeper.ts).
 */
import { ValidationError } from "../core/errors.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import type { Sql } from "../core/ports/sql.js";
import { deleteRuns, findExpiredRuns } from "./runs/expired-runs.js";
import { takeLease } from "../core/postgres/lease.js";

export const MAX_RETENTION_DAYS = 3650;
/**
 * Runs deleted per statement (ids bound as one array parameter): each lightweight DELETE has a cost of its own however
 * few rows it marks, so few large statements beat many small ones (docs/BENCHMARKS.md, "ClickHouse calls").
 */
const CHUNK = 50_000;
const DAY_MS = 86_400_000;

export interface RetentionSetting {
  /** null: keep forever. */
  readonly days: number | null;
  readonly swept_at: string | null;
  readonly deleted_runs: number;
}

export interface RetentionOutcome {
  readonly project_id: number;
  readonly days: number;
  readonly cutoff: string;
  readonly deleted_runs: number;
  /** Dead letters (the user's events the pipeline could not store) that last failed before the cutoff. */
  readonly deleted_dead_letters: number;
}

/** The form field: empty or 0 = keep forever; else whole days 1..MAX_RETENTION_DAYS. */
export function parseRetentionDays(raw: string | undefined): number | null {
  const text = (raw ?? "").trim();
  if (text === "" || text === "0") return null;
  const days = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(days) || days < 1 || days > MAX_RETENTION_DAYS) {
    throw new ValidationError({ message: `retention_days must be empty or 0 (keep forever) or a whole number of days from 1 to ${MAX_RETENTION_DAYS}`, field: "retention_days" });
  }
  return days;
}

export async function loadRetention(sql: Sql, projectId: number): Promise<RetentionSetting> {
  const rows = await sql.query<Record<string, unknown>>(
    "SELECT retention_days, retention_swept_at, retention_deleted_runs FROM project_settings WHERE project_id = $1",
    [projectId],
  );
  const r = rows[0];
  return {
    days: r?.retention_days == null ? null : Number(r.retention_days),
    swept_at: r?.retention_swept_at == null ? null : new Date(r.retention_swept_at as string).toISOString(),
    deleted_runs: Number(r?.retention_deleted_runs ?? 0),
  };
}

export async function saveRetentionDays(sql: Sql, projectId: number, days: number | null): Promise<void> {
  await sql.query(
    `INSERT INTO project_settings (project_id, retention_days, updated_at) VALUES ($1, $2, now())
     ON CONFLICT (project_id) DO UPDATE SET retention_days = EXCLUDED.retention_days, updated_at = now()`,
    [projectId, days],
  );
}

/**
 * Deletes, for every user with a retention (or only `projectId`), the runs whose last activity is before now − days.
 * Safe to run again or concurrently with ingest: a run that gains an event is no longer expired.
 */
export async function applyRetention(ports: { sql: Sql; ch: ClickHouse }, opts: { now?: Date; projectId?: number } = {}): Promise<RetentionOutcome[]> {
  const now = opts.now ?? new Date();
  const users = await ports.sql.query<{ project_id: string | number; retention_days: number }>(
    `SELECT project_id, retention_days FROM project_settings WHERE retention_days IS NOT NULL${opts.projectId !== undefined ? " AND project_id = $1" : ""} ORDER BY project_id`,
    opts.projectId !== undefined ? [opts.projectId] : [],
  );
  const outcomes: RetentionOutcome[] = [];
  for (const u of users) {
    const projectId = Number(u.project_id);
    const cutoff = new Date(now.getTime() - Number(u.retention_days) * DAY_MS);
    let deleted = 0;
    for (;;) {
      const runs = await findExpiredRuns(ports.ch, projectId, cutoff, CHUNK);
      if (runs.length === 0) break;
      await deleteRuns(ports.ch, projectId, runs);
      await ports.sql.query(
        `WITH h AS (DELETE FROM human_inputs WHERE project_id = $1 AND sdk_run_id = ANY($2::text[]))
         DELETE FROM agent_run_starts WHERE project_id = $1 AND external_id = ANY($2::text[])`,
        [projectId, runs.map((r) => r.external_id)],
      );
      deleted += runs.length;
      if (runs.length < CHUNK) break;
    }
    // Dead letters hold event bodies too: the retention a user chose covers them as well.
    const dead = await ports.sql.query<{ n: string | number }>(
      "WITH d AS (DELETE FROM dead_letters WHERE project_id = $1 AND last_failed_at < $2 RETURNING 1) SELECT count(*) AS n FROM d",
      [projectId, cutoff.toISOString()],
    );
    await ports.sql.query(
      "UPDATE project_settings SET retention_swept_at = $2, retention_deleted_runs = retention_deleted_runs + $3 WHERE project_id = $1",
      [projectId, now.toISOString(), deleted],
    );
    outcomes.push({ project_id: projectId, days: Number(u.retention_days), cutoff: cutoff.toISOString(), deleted_runs: deleted, deleted_dead_letters: Number(dead[0]?.n ?? 0) });
  }
  return outcomes;
}

/**
 * One sweep if this process wins the lease for the interval (one sweeper across pipeline processes); undefined when
 * another holds it.
 */
export async function sweepRetention(ports: { sql: Sql; ch: ClickHouse }, holder: string, intervalMs: number): Promise<RetentionOutcome[] | undefined> {
  if (!(await takeLease(ports.sql, "retention_sweep_lease", holder, (intervalMs * 0.9) / 1000))) return undefined;
  return applyRetention(ports);
}

/**
 * Data retention: a user's retention in days (Postgres user_settings.retention_days; NULL = keep forever, the
 * default) and the sweep that deletes their runs whose last activity is older than that — in ClickHouse every row of
 * the run (core/clickhouse/retention.ts), in Postgres the run's human-input answers and start record.
 * Runs: `runwatch retention apply` (now), and the pipeline role hourly under a lease (pipeline/retention-sweeper.ts).
 */
import { ValidationError } from "../core/errors.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import type { Sql } from "../core/ports/sql.js";
import { deleteRuns, findExpiredRuns } from "../core/clickhouse/retention.js";
import { takeLease } from "../core/postgres/lease.js";

export const MAX_RETENTION_DAYS = 3650;
/** Runs deleted per statement (ids bound as one array parameter): each lightweight DELETE costs ~0.3 s however few rows it marks. */
const CHUNK = 50_000;
const DAY_MS = 86_400_000;

export interface RetentionSetting {
  /** null: keep forever. */
  readonly days: number | null;
  readonly swept_at: string | null;
  readonly deleted_runs: number;
}

export interface RetentionOutcome {
  readonly user_id: number;
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

export async function loadRetention(sql: Sql, userId: number): Promise<RetentionSetting> {
  const rows = await sql.query<Record<string, unknown>>(
    "SELECT retention_days, retention_swept_at, retention_deleted_runs FROM user_settings WHERE user_id = $1",
    [userId],
  );
  const r = rows[0];
  return {
    days: r?.retention_days == null ? null : Number(r.retention_days),
    swept_at: r?.retention_swept_at == null ? null : new Date(r.retention_swept_at as string).toISOString(),
    deleted_runs: Number(r?.retention_deleted_runs ?? 0),
  };
}

export async function saveRetentionDays(sql: Sql, userId: number, days: number | null): Promise<void> {
  await sql.query(
    `INSERT INTO user_settings (user_id, retention_days, updated_at) VALUES ($1, $2, now())
     ON CONFLICT (user_id) DO UPDATE SET retention_days = EXCLUDED.retention_days, updated_at = now()`,
    [userId, days],
  );
}

/**
 * Deletes, for every user with a retention (or only `userId`), the runs whose last activity is before now − days.
 * Safe to run again or concurrently with ingest: a run that gains an event is no longer expired.
 */
export async function applyRetention(ports: { sql: Sql; ch: ClickHouse }, opts: { now?: Date; userId?: number } = {}): Promise<RetentionOutcome[]> {
  const now = opts.now ?? new Date();
  const users = await ports.sql.query<{ user_id: string | number; retention_days: number }>(
    `SELECT user_id, retention_days FROM user_settings WHERE retention_days IS NOT NULL${opts.userId !== undefined ? " AND user_id = $1" : ""} ORDER BY user_id`,
    opts.userId !== undefined ? [opts.userId] : [],
  );
  const outcomes: RetentionOutcome[] = [];
  for (const u of users) {
    const userId = Number(u.user_id);
    const cutoff = new Date(now.getTime() - Number(u.retention_days) * DAY_MS);
    let deleted = 0;
    for (;;) {
      const runs = await findExpiredRuns(ports.ch, userId, cutoff, CHUNK);
      if (runs.length === 0) break;
      await deleteRuns(ports.ch, userId, runs);
      await ports.sql.query(
        `WITH h AS (DELETE FROM human_inputs WHERE user_id = $1 AND sdk_run_id = ANY($2::text[]))
         DELETE FROM agent_run_starts WHERE user_id = $1 AND external_id = ANY($2::text[])`,
        [userId, runs.map((r) => r.external_id)],
      );
      deleted += runs.length;
      if (runs.length < CHUNK) break;
    }
    // Dead letters hold event bodies too: the retention a user chose covers them as well.
    const dead = await ports.sql.query<{ n: string | number }>(
      "WITH d AS (DELETE FROM dead_letters WHERE user_id = $1 AND last_failed_at < $2 RETURNING 1) SELECT count(*) AS n FROM d",
      [userId, cutoff.toISOString()],
    );
    await ports.sql.query(
      "UPDATE user_settings SET retention_swept_at = $2, retention_deleted_runs = retention_deleted_runs + $3 WHERE user_id = $1",
      [userId, now.toISOString(), deleted],
    );
    outcomes.push({ user_id: userId, days: Number(u.retention_days), cutoff: cutoff.toISOString(), deleted_runs: deleted, deleted_dead_letters: Number(dead[0]?.n ?? 0) });
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

/**
 * The notification queue's tables in Postgres (migration 040): alert_firings (every firing key, for dedupe),
 * alert_rule_state (a rule's cooldown window and suppressed count) and notification_jobs (what the delivery worker
 * sends). Their rows, read and written as they are; which firings become jobs (dedupe, cooldown) is decided in
 * alerts/queue.ts, whose transaction calls the functions taking `tx` below in the order its comment gives.
 */
import type { Sql } from "../../core/ports/sql.js";
import type { Channel, ClaimedJob, JobStatus, NotificationJob, NotificationPayload } from "./jobs.js";
import type { RuleHeader } from "./rules.js";

/** Records firing keys of existing rules; returns the ones not seen before (a replayed key is left out). */
export async function recordFiringKeys(
  tx: Sql,
  ruleIds: readonly number[],
  keys: readonly string[],
): Promise<{ rule_id: number; dedup_key: string }[]> {
  const rows = await tx.query<{ rule_id: number; dedup_key: string }>(
    `INSERT INTO alert_firings (rule_id, dedup_key)
       SELECT f.rule_id, f.dedup_key FROM unnest($1::bigint[], $2::text[]) AS f(rule_id, dedup_key)
       JOIN alert_rules r ON r.id = f.rule_id
       ON CONFLICT (rule_id, dedup_key) DO NOTHING
       RETURNING rule_id, dedup_key`,
    [ruleIds, keys],
  );
  return rows.map((r) => ({ rule_id: Number(r.rule_id), dedup_key: r.dedup_key }));
}

/** A rule (as it is now) joined with its cooldown state, read under a row lock. */
export interface LockedRuleState extends Omit<RuleHeader, "id"> {
  readonly rule_id: number;
  readonly config: Record<string, unknown>;
  readonly enabled: boolean;
  /** The cooldown window has ended: a firing may be sent. */
  readonly open: boolean;
  /** Firings suppressed since the rule's last notification. */
  readonly suppressed: number;
  /** The database's now(), ISO. */
  readonly now: string;
}

/**
 * Locks the rules' alert_rule_state rows (made first when missing), in rule id order, so processes firing the
 * same rule take turns; `ruleIds` sorted ascending.
 */
export async function lockRuleStates(tx: Sql, ruleIds: readonly number[]): Promise<LockedRuleState[]> {
  await tx.query(`INSERT INTO alert_rule_state (rule_id) SELECT unnest($1::bigint[]) ON CONFLICT DO NOTHING`, [ruleIds]);
  const rows = await tx.query<Record<string, unknown>>(
    `SELECT s.rule_id, r.project_id, r.name, r.trigger_type, r.channel, r.target, r.config, r.enabled,
              s.cooldown_until <= now() AS open, s.suppressed, now() AS now
       FROM alert_rule_state s JOIN alert_rules r ON r.id = s.rule_id
       WHERE s.rule_id = ANY($1::bigint[])
       ORDER BY s.rule_id
       FOR UPDATE OF s`,
    [ruleIds],
  );
  return rows.map((r) => ({
    rule_id: Number(r.rule_id),
    project_id: Number(r.project_id),
    name: String(r.name),
    trigger_type: String(r.trigger_type),
    channel: String(r.channel),
    target: String(r.target),
    config: (typeof r.config === "string" ? JSON.parse(r.config) : (r.config ?? {})) as Record<string, unknown>,
    enabled: Boolean(r.enabled),
    open: Boolean(r.open),
    suppressed: Number(r.suppressed),
    now: new Date(r.now as string).toISOString(),
  }));
}

/** A job to insert: the rule as it is now, and what the notification says. */
export interface NewNotificationJob {
  readonly project_id: number;
  readonly rule_id: number;
  readonly rule_name: string;
  readonly trigger_type: string;
  readonly channel: string;
  readonly target: string;
  readonly payload: NotificationPayload;
  readonly max_attempts: number;
}

/** Queues a job (due now); its id. */
export async function insertJob(sql: Sql, kind: "alert" | "test", job: NewNotificationJob): Promise<number> {
  const [row] = await sql.query<{ id: number }>(
    `INSERT INTO notification_jobs (project_id, rule_id, rule_name, trigger_type, channel, target, kind, payload, max_attempts)
     VALUES ($1, $2, $3, $4, $5, $6, '${kind === "test" ? "test" : "alert"}', $7, $8) RETURNING id`,
    [job.project_id, job.rule_id, job.rule_name, job.trigger_type, job.channel, job.target, JSON.stringify(job.payload), job.max_attempts],
  );
  return Number(row!.id);
}

/** Points a firing at the job that notifies it. */
export async function linkFiringToJob(tx: Sql, ruleId: number, key: string, jobId: number): Promise<void> {
  await tx.query(`UPDATE alert_firings SET job_id = $3 WHERE rule_id = $1 AND dedup_key = $2`, [ruleId, key, jobId]);
}

/** A notification was sent: a new cooldown window starts, carrying the firings suppressed in this call. */
export async function startCooldown(tx: Sql, ruleId: number, cooldownSeconds: number, suppressed: number): Promise<void> {
  await tx.query(
    `UPDATE alert_rule_state SET cooldown_until = now() + make_interval(secs => $2::double precision),
                  last_sent_at = now(), suppressed = $3::int, suppressed_total = suppressed_total + $3::int
           WHERE rule_id = $1`,
    [ruleId, cooldownSeconds, suppressed],
  );
}

/** Nothing was sent: the firings are counted as suppressed, for the next notification to report. */
export async function addSuppressed(tx: Sql, ruleId: number, suppressed: number): Promise<void> {
  await tx.query(
    `UPDATE alert_rule_state SET suppressed = suppressed + $2::int, suppressed_total = suppressed_total + $2::int WHERE rule_id = $1`,
    [ruleId, suppressed],
  );
}

/** Forgets firing keys older than any trigger's look-back; the jobs (the history) stay. */
export async function pruneFirings(sql: Sql): Promise<void> {
  await sql.query(`DELETE FROM alert_firings WHERE fired_at < now() - interval '30 days'`);
}

const JOB_COLUMNS = `j.id, j.project_id, j.rule_id, j.rule_name, j.trigger_type, j.channel, j.target, j.kind, j.payload, j.status,
  j.attempts, j.max_attempts, j.next_attempt_at, j.last_error, j.created_at, j.delivered_at`;

function decodeJob(r: Record<string, unknown>): NotificationJob {
  const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string).toISOString());
  return {
    id: Number(r.id),
    project_id: Number(r.project_id),
    rule_id: r.rule_id === null ? null : Number(r.rule_id),
    rule_name: String(r.rule_name),
    trigger_type: String(r.trigger_type),
    channel: r.channel as Channel,
    target: String(r.target),
    kind: r.kind as "alert" | "test",
    payload: (typeof r.payload === "string" ? JSON.parse(r.payload) : r.payload) as NotificationPayload,
    status: r.status as JobStatus,
    attempts: Number(r.attempts),
    max_attempts: Number(r.max_attempts),
    next_attempt_at: iso(r.next_attempt_at)!,
    last_error: String(r.last_error ?? ""),
    created_at: iso(r.created_at)!,
    delivered_at: iso(r.delivered_at),
  };
}

/**
 * Claims up to `limit` due jobs (or the one job `onlyId`) for `leaseSeconds`: counts the attempt and hides the
 * job from other workers until the lease ends, so a worker that dies mid-delivery hands it back.
 */
export async function claimJobs(sql: Sql, limit: number, leaseSeconds: number, onlyId?: number): Promise<ClaimedJob[]> {
  const rows = await sql.query<Record<string, unknown>>(
    `UPDATE notification_jobs j SET locked_until = now() + make_interval(secs => $2::double precision),
            attempts = j.attempts + 1, updated_at = now()
     FROM (SELECT id FROM notification_jobs
           WHERE status IN ('pending', 'retrying') AND next_attempt_at <= now()
             AND (locked_until IS NULL OR locked_until < now())
             AND ($3::bigint IS NULL OR id = $3::bigint)
           ORDER BY next_attempt_at, id
           LIMIT $1
           FOR UPDATE SKIP LOCKED) due
     WHERE j.id = due.id
     RETURNING ${JOB_COLUMNS}`,
    [limit, leaseSeconds, onlyId ?? null],
  );
  if (rows.length === 0) return [];
  const jobs = rows.map(decodeJob);
  const ruleIds = [...new Set(jobs.map((j) => j.rule_id).filter((id): id is number => id !== null))];
  const secrets = new Map<number, string>();
  if (ruleIds.length > 0) {
    for (const r of await sql.query<{ id: number; secret: string }>(`SELECT id, secret FROM alert_rules WHERE id = ANY($1::bigint[])`, [ruleIds])) {
      secrets.set(Number(r.id), r.secret);
    }
  }
  return jobs.map((j) => ({ ...j, secret: j.rule_id !== null ? (secrets.get(j.rule_id) ?? "") : "", rule_exists: j.rule_id !== null && secrets.has(j.rule_id) }));
}

export async function markDelivered(sql: Sql, id: number): Promise<void> {
  await sql.query(
    `UPDATE notification_jobs SET status = 'delivered', delivered_at = now(), locked_until = NULL, last_error = '', updated_at = now() WHERE id = $1`,
    [id],
  );
}

/** Records a failed attempt: `retrying` (due again in `retryInSeconds`) or `dead`; the error is kept to 2000 characters. */
export async function recordFailedAttempt(sql: Sql, id: number, status: "retrying" | "dead", error: string, retryInSeconds: number): Promise<void> {
  await sql.query(
    `UPDATE notification_jobs SET status = $2, last_error = $3, locked_until = NULL, updated_at = now(),
            next_attempt_at = now() + make_interval(secs => $4::double precision)
     WHERE id = $1`,
    [id, status, error.slice(0, 2000), retryInSeconds],
  );
}

/** A dead job back in the queue (the "Retry" button on /alerts): fresh attempts, due now. */
export async function requeueJob(sql: Sql, projectId: number, id: number): Promise<boolean> {
  const rows = await sql.query(
    `UPDATE notification_jobs SET status = 'retrying', attempts = 0, next_attempt_at = now(), locked_until = NULL, updated_at = now()
     WHERE id = $1 AND project_id = $2 AND status = 'dead' RETURNING id`,
    [id, projectId],
  );
  return rows.length > 0;
}

export async function getJob(sql: Sql, id: number): Promise<NotificationJob | undefined> {
  const [row] = await sql.query<Record<string, unknown>>(`SELECT ${JOB_COLUMNS} FROM notification_jobs j WHERE j.id = $1`, [id]);
  return row ? decodeJob(row) : undefined;
}

/** The user's notifications, newest first (the history on /alerts). */
export async function listJobs(sql: Sql, projectId: number, opts: { limit?: number; ruleId?: number } = {}): Promise<NotificationJob[]> {
  const rows = await sql.query<Record<string, unknown>>(
    `SELECT ${JOB_COLUMNS} FROM notification_jobs j
     WHERE j.project_id = $1 AND ($3::bigint IS NULL OR j.rule_id = $3::bigint)
     ORDER BY j.id DESC LIMIT $2`,
    [projectId, Math.min(500, opts.limit ?? 100), opts.ruleId ?? null],
  );
  return rows.map(decodeJob);
}

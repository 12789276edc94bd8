/**
 * The notification job queue, in Postgres (table notification_jobs; migration 040), the same in both modes.
 *
 * dispatchFirings (pipeline, one transaction per batch or sweep):
 *   1. records each firing key in alert_firings (ON CONFLICT DO NOTHING): a replayed batch or a repeated sweep
 *      finds its keys there and stops;
 *   2. locks the rules' alert_rule_state rows (FOR UPDATE, in rule id order), so processes firing the same rule
 *      take turns; a rule outside its cooldown sends its first new firing as a job and starts a new window; the
 *      other firings are counted as suppressed and reported in the next notification;
 *   3. inserts the jobs; the firing rows point at them.
 * Workers (worker.ts) claim due jobs with FOR UPDATE SKIP LOCKED and a lease, and record the outcome here.
 */
import type { Logger } from "../core/logger.js";
import type { PubSub } from "../core/ports/pubsub.js";
import { defineProcedure, type Sql } from "../core/ports/sql.js";
import type { AlertFiring } from "./model.js";
import { TriggerRegistry } from "./registry.js";
import type { Channel, ClaimedJob, JobStatus, NotificationJob, NotificationPayload } from "./jobs.js";
import type { RuleInput } from "./model.js";
import { loadNotificationSettings } from "./settings.js";

/** PubSub channel that wakes idle workers when jobs were queued (best effort; workers also poll). */
export const JOBS_CHANNEL = "notify.jobs";

/** The rule's cooldown_seconds, or its trigger's default (300 s for a trigger this process does not know). */
export const cooldownSecondsOf = (trigger: { defaultCooldownSeconds: number } | undefined, config: Record<string, unknown>): number => {
  const c = config.cooldown_seconds;
  return typeof c === "number" && Number.isFinite(c) && c >= 0 ? c : (trigger?.defaultCooldownSeconds ?? 300);
};

export function runLink(publicWebUrl: string, externalId: string): string {
  return `${publicWebUrl.replace(/\/$/, "")}/dashboard/${encodeURIComponent(externalId)}`;
}

export function payloadOf(f: AlertFiring, publicWebUrl: string, suppressed: number, now: string): NotificationPayload {
  const r = f.run;
  return {
    message: f.message,
    fired_at: now,
    url: r ? runLink(publicWebUrl, r.external_id) : `${publicWebUrl.replace(/\/$/, "")}/alerts`,
    rule: { id: f.rule.id, name: f.rule.name, trigger_type: f.rule.trigger_type },
    run: r
      ? {
          external_id: r.external_id, run_id: r.run_id, agent_name: r.agent_name, status: r.status, started_at: r.started_at,
          ended_at: r.ended_at, cost_usd: r.cost_usd, error_count: r.error_count, last_error: r.last_error.slice(0, 2000),
        }
      : null,
    event: f.event ? { event_id: f.event.event_id, event_type: f.event.event_type, occurred_at: f.event.occurred_at } : null,
    details: f.details ?? {},
    suppressed_since_last: suppressed,
    test: false,
  };
}

/** An alert rule (as stored) joined with its cooldown state, read under a row lock at dispatch. */
interface RuleRow extends RuleInput {
  rule_id: number;
  project_id: number;
  open: boolean;
  suppressed: number;
  now: string;
}

export interface DispatchResult {
  jobs: number[];
  suppressed: number;
  duplicates: number;
}

/** Records firings, applies dedupe and cooldown, queues jobs. See the module comment. */
export async function dispatchFirings(
  sql: Sql,
  firings: readonly AlertFiring[],
  opts: { publicWebUrl: string; logger?: Logger; pubsub?: PubSub; maxAttempts?: number; triggers?: TriggerRegistry },
): Promise<DispatchResult> {
  // Same key twice in one call: keep the first.
  const unique = new Map<string, AlertFiring>();
  for (const f of firings) if (!unique.has(`${f.rule.id}\u0000${f.key}`)) unique.set(`${f.rule.id}\u0000${f.key}`, f);
  if (unique.size === 0) return { jobs: [], suppressed: 0, duplicates: 0 };
  const list = [...unique.values()];
  const triggers = opts.triggers ?? new TriggerRegistry();
  const defaultCooldowns: Record<string, number> = {};
  for (const f of list) defaultCooldowns[f.rule.trigger_type] ??= cooldownSecondsOf(triggers.get(f.rule.trigger_type), {});
  const result = await sql.run(recordFirings, {
    firings: list,
    publicWebUrl: opts.publicWebUrl,
    maxAttempts: opts.maxAttempts ?? loadNotificationSettings().maxAttempts,
    defaultCooldowns,
  });
  if (result.jobs.length > 0) {
    opts.logger?.info("notifications queued", { jobs: result.jobs.length, suppressed: result.suppressed });
    await opts.pubsub?.publish(JOBS_CHANNEL, String(result.jobs.length));
  }
  return result;
}

interface RecordFiringsArgs {
  readonly firings: readonly AlertFiring[];
  readonly publicWebUrl: string;
  readonly maxAttempts: number;
  /** Cooldown of each trigger type whose rules do not set cooldown_seconds. */
  readonly defaultCooldowns: Readonly<Record<string, number>>;
}

/** dispatchFirings' transaction (steps 1–3 of the module comment), run where the connection lives. */
export const recordFirings = defineProcedure("alerts.record-firings", async (sql, args: RecordFiringsArgs): Promise<DispatchResult> => {
  const result: DispatchResult = { jobs: [], suppressed: 0, duplicates: 0 };
  const list = args.firings;
  await sql.transaction(async (tx) => {
    const fresh = await tx.query<{ rule_id: number; dedup_key: string }>(
      `INSERT INTO alert_firings (rule_id, dedup_key)
       SELECT f.rule_id, f.dedup_key FROM unnest($1::bigint[], $2::text[]) AS f(rule_id, dedup_key)
       JOIN alert_rules r ON r.id = f.rule_id
       ON CONFLICT (rule_id, dedup_key) DO NOTHING
       RETURNING rule_id, dedup_key`,
      [list.map((f) => f.rule.id), list.map((f) => f.key)],
    );
    result.duplicates = list.length - fresh.length;
    if (fresh.length === 0) return;
    const isFresh = new Set(fresh.map((r) => `${Number(r.rule_id)}\u0000${r.dedup_key}`));
    const byRule = new Map<number, AlertFiring[]>();
    for (const f of list) {
      if (!isFresh.has(`${f.rule.id}\u0000${f.key}`)) continue;
      const l = byRule.get(f.rule.id);
      if (l) l.push(f);
      else byRule.set(f.rule.id, [f]);
    }
    const ruleIds = [...byRule.keys()].sort((a, b) => a - b);
    await tx.query(`INSERT INTO alert_rule_state (rule_id) SELECT unnest($1::bigint[]) ON CONFLICT DO NOTHING`, [ruleIds]);
    const rows = await tx.query<RuleRow>(
      `SELECT s.rule_id, r.project_id, r.name, r.trigger_type, r.channel, r.target, r.config, r.enabled,
              s.cooldown_until <= now() AS open, s.suppressed, now() AS now
       FROM alert_rule_state s JOIN alert_rules r ON r.id = s.rule_id
       WHERE s.rule_id = ANY($1::bigint[])
       ORDER BY s.rule_id
       FOR UPDATE OF s`,
      [ruleIds],
    );
    for (const row of rows) {
      const ruleId = Number(row.rule_id);
      const fired = byRule.get(ruleId) ?? [];
      if (!row.enabled || fired.length === 0) continue; // disabled since the evaluator's cache was filled
      const now = new Date(row.now).toISOString();
      const config = typeof row.config === "string" ? JSON.parse(row.config) : (row.config ?? {});
      const cooldown = cooldownSecondsOf({ defaultCooldownSeconds: args.defaultCooldowns[row.trigger_type] ?? 300 }, config);
      // Cooldown 0: every firing is sent. Otherwise the first one, if the window is open.
      const toSend = cooldown === 0 ? fired : row.open ? fired.slice(0, 1) : [];
      const suppressedNow = fired.length - toSend.length;
      let carried = Number(row.suppressed);
      for (const f of toSend) {
        // The rule as it is now (a rename or new target applies to new notifications).
        const rule = { ...f.rule, name: row.name, channel: row.channel, target: row.target };
        const payload = payloadOf({ ...f, rule }, args.publicWebUrl, carried, now);
        carried = 0;
        const [job] = await tx.query<{ id: number }>(
          `INSERT INTO notification_jobs (project_id, rule_id, rule_name, trigger_type, channel, target, kind, payload, max_attempts)
           VALUES ($1, $2, $3, $4, $5, $6, 'alert', $7, $8) RETURNING id`,
          [row.project_id, ruleId, row.name, row.trigger_type, row.channel, row.target, JSON.stringify(payload), args.maxAttempts],
        );
        result.jobs.push(Number(job!.id));
        await tx.query(`UPDATE alert_firings SET job_id = $3 WHERE rule_id = $1 AND dedup_key = $2`, [ruleId, f.key, job!.id]);
      }
      result.suppressed += suppressedNow;
      if (toSend.length > 0) {
        await tx.query(
          `UPDATE alert_rule_state SET cooldown_until = now() + make_interval(secs => $2::double precision),
                  last_sent_at = now(), suppressed = $3::int, suppressed_total = suppressed_total + $3::int
           WHERE rule_id = $1`,
          [ruleId, cooldown, suppressedNow],
        );
      } else {
        await tx.query(
          `UPDATE alert_rule_state SET suppressed = suppressed + $2::int, suppressed_total = suppressed_total + $2::int WHERE rule_id = $1`,
          [ruleId, suppressedNow],
        );
      }
    }
  });
  return result;
});

/** A test notification for a rule (the /alerts "Send test" button). Bypasses dedupe and cooldown. */
export async function enqueueTest(
  sql: Sql,
  rule: { id: number; project_id: number; name: string; trigger_type: string; channel: string; target: string },
  opts: { publicWebUrl: string; maxAttempts?: number },
): Promise<number> {
  const now = new Date().toISOString();
  const payload: NotificationPayload = {
    message: `Test notification from Runwatch for the rule “${rule.name}”. If you can read this, the ${rule.channel} channel works.`,
    fired_at: now,
    url: `${opts.publicWebUrl.replace(/\/$/, "")}/alerts`,
    rule: { id: rule.id, name: rule.name, trigger_type: rule.trigger_type },
    run: null,
    event: null,
    details: {},
    suppressed_since_last: 0,
    test: true,
  };
  const [job] = await sql.query<{ id: number }>(
    `INSERT INTO notification_jobs (project_id, rule_id, rule_name, trigger_type, channel, target, kind, payload, max_attempts)
     VALUES ($1, $2, $3, $4, $5, $6, 'test', $7, $8) RETURNING id`,
    [rule.project_id, rule.id, rule.name, rule.trigger_type, rule.channel, rule.target, JSON.stringify(payload), opts.maxAttempts ?? loadNotificationSettings().maxAttempts],
  );
  return Number(job!.id);
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

/** Records a failed attempt: retry after `retryInMs`, or dead when out of attempts or `permanent`. */
export async function markFailed(sql: Sql, job: Pick<NotificationJob, "id" | "attempts" | "max_attempts">, error: string, retryInMs: number, permanent: boolean): Promise<JobStatus> {
  const dead = permanent || job.attempts >= job.max_attempts;
  await sql.query(
    `UPDATE notification_jobs SET status = $2, last_error = $3, locked_until = NULL, updated_at = now(),
            next_attempt_at = now() + make_interval(secs => $4::double precision)
     WHERE id = $1`,
    [job.id, dead ? "dead" : "retrying", error.slice(0, 2000), dead ? 0 : retryInMs / 1000],
  );
  return dead ? "dead" : "retrying";
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

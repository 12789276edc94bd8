/**
 * The notification job queue, in Postgres (table notification_jobs; migration 040), the same in both modes; its
 * rows are read and written by stores/alerts/notifications.ts, what goes in them is decided here.
 *
 * dispatchFirings (pipeline, one transaction per batch or sweep):
 *   1. records each firing key in alert_firings (ON CONFLICT DO NOTHING): a replayed batch or a repeated sweep
 *      finds its keys there and stops;
 *   2. locks the rules' alert_rule_state rows (FOR UPDATE, in rule id order), so processes firing the same rule
 *      take turns; a rule outside its cooldown sends its first new firing as a job and starts a new window; the
 *      other firings are counted as suppressed and reported in the next notification;
 *   3. inserts the jobs; the firing rows point at them.
 * Workers (delivery/worker.ts) claim due jobs with FOR UPDATE SKIP LOCKED and a lease, and record the outcome;
 * markFailed decides between a retry and a dead job.
 */
import type { Logger } from "../core/logger.js";
import type { PubSub } from "../core/ports/pubsub.js";
import { defineProcedure, type Sql } from "../core/ports/sql.js";
import type { JobStatus, NotificationJob, NotificationPayload } from "../stores/alerts/jobs.js";
import {
  addSuppressed, insertJob, linkFiringToJob, lockRuleStates, recordFailedAttempt, recordFiringKeys, startCooldown,
} from "../stores/alerts/notifications.js";
import type { AlertFiring } from "./model.js";
import { TriggerRegistry } from "./registry.js";
import { loadNotificationSettings } from "./settings.js";

export { getJob, listJobs, requeueJob } from "../stores/alerts/notifications.js";

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
          sdk_run_id: r.external_id, run_id: r.run_id, agent_name: r.agent_name, status: r.status, started_at: r.started_at,
          ended_at: r.ended_at, cost_usd: r.cost_usd, error_count: r.error_count, last_error: r.last_error.slice(0, 2000),
        }
      : null,
    event: f.event ? { event_id: f.event.event_id, event_type: f.event.event_type, occurred_at: f.event.occurred_at } : null,
    details: f.details ?? {},
    suppressed_since_last: suppressed,
    test: false,
  };
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
    const fresh = await recordFiringKeys(tx, list.map((f) => f.rule.id), list.map((f) => f.key));
    result.duplicates = list.length - fresh.length;
    if (fresh.length === 0) return;
    const isFresh = new Set(fresh.map((r) => `${r.rule_id}\u0000${r.dedup_key}`));
    const byRule = new Map<number, AlertFiring[]>();
    for (const f of list) {
      if (!isFresh.has(`${f.rule.id}\u0000${f.key}`)) continue;
      const l = byRule.get(f.rule.id);
      if (l) l.push(f);
      else byRule.set(f.rule.id, [f]);
    }
    const ruleIds = [...byRule.keys()].sort((a, b) => a - b);
    for (const row of await lockRuleStates(tx, ruleIds)) {
      const ruleId = row.rule_id;
      const fired = byRule.get(ruleId) ?? [];
      if (!row.enabled || fired.length === 0) continue; // disabled since the evaluator's cache was filled
      const cooldown = cooldownSecondsOf({ defaultCooldownSeconds: args.defaultCooldowns[row.trigger_type] ?? 300 }, row.config);
      // Cooldown 0: every firing is sent. Otherwise the first one, if the window is open.
      const toSend = cooldown === 0 ? fired : row.open ? fired.slice(0, 1) : [];
      const suppressedNow = fired.length - toSend.length;
      let carried = row.suppressed;
      for (const f of toSend) {
        // The rule as it is now (a rename or new target applies to new notifications).
        const rule = { ...f.rule, name: row.name, channel: row.channel, target: row.target };
        const payload = payloadOf({ ...f, rule }, args.publicWebUrl, carried, row.now);
        carried = 0;
        const jobId = await insertJob(tx, "alert", {
          project_id: row.project_id, rule_id: ruleId, rule_name: row.name, trigger_type: row.trigger_type, channel: row.channel,
          target: row.target, payload, max_attempts: args.maxAttempts,
        });
        result.jobs.push(jobId);
        await linkFiringToJob(tx, ruleId, f.key, jobId);
      }
      result.suppressed += suppressedNow;
      if (toSend.length > 0) await startCooldown(tx, ruleId, cooldown, suppressedNow);
      else await addSuppressed(tx, ruleId, suppressedNow);
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
  return insertJob(sql, "test", {
    project_id: rule.project_id, rule_id: rule.id, rule_name: rule.name, trigger_type: rule.trigger_type, channel: rule.channel,
    target: rule.target, payload, max_attempts: opts.maxAttempts ?? loadNotificationSettings().maxAttempts,
  });
}

/** Records a failed attempt: retry after `retryInMs`, or dead when out of attempts or `permanent`. */
export async function markFailed(sql: Sql, job: Pick<NotificationJob, "id" | "attempts" | "max_attempts">, error: string, retryInMs: number, permanent: boolean): Promise<JobStatus> {
  const dead = permanent || job.attempts >= job.max_attempts;
  await recordFailedAttempt(sql, job.id, dead ? "dead" : "retrying", error, dead ? 0 : retryInMs / 1000);
  return dead ? "dead" : "retrying";
}

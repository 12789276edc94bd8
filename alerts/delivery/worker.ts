/**
 * The delivery worker: claims due notification jobs (stores/alerts/notifications.ts, FOR UPDATE SKIP LOCKED + a
 * lease, so any number of workers in any number of processes share the queue), sends each through its channel, and
 * records the outcome: delivered; retrying after an exponential backoff (settings.ts); or dead when attempts run out or the
 * failure is permanent (a refused target). Idle workers poll every RUNWATCH_NOTIFY_POLL_MS and wake at once
 * when a dispatcher announces new jobs on PubSub "notify.jobs".
 *
 * Delivery is at-least-once: a worker that dies between the peer's 2xx and markDelivered sends that job again
 * when its lease ends; webhooks carry X-Runwatch-Delivery (the job id) so receivers can drop the repeat.
 */
import type { JobCounters } from "../../core/jobs.js";
import { createLogger, type Logger } from "../../core/logger.js";
import { startPollingWorker } from "../../core/polling-worker.js";
import type { PubSub } from "../../core/ports/pubsub.js";
import type { Sql } from "../../core/ports/sql.js";
import { channelByName, PermanentFailure, type ChannelContext } from "./channels/index.js";
import type { ClaimedJob, JobStatus } from "../../stores/alerts/jobs.js";
import { claimJobs, markDelivered } from "../../stores/alerts/notifications.js";
import { JOBS_CHANNEL, markFailed } from "../queue.js";
import { backoffDelay, loadNotificationSettings, type NotificationSettings } from "../settings.js";

export interface WorkerDeps {
  readonly sql: Sql;
  readonly pubsub: PubSub;
  readonly logger?: Logger;
  readonly settings?: NotificationSettings;
  /** Counts its passes, attempts and failed attempts (its background job, deploy/jobs.ts). */
  readonly counters?: JobCounters;
}

export interface NotificationWorker {
  /** Claims and delivers due jobs until none is due; resolves with how many were attempted. */
  drain(): Promise<number>;
  close(): Promise<void>;
}

const BATCH = 16;

const errorText = (err: unknown): string => {
  const e = err as { message?: string; code?: string; responseCode?: number; response?: string };
  const base = e?.message ?? String(err);
  return e?.response && !base.includes(e.response) ? `${base} (${e.response})` : base;
};

/** One attempt at one claimed job; records the outcome. */
export async function deliverClaimed(job: ClaimedJob, ctx: ChannelContext & { sql: Sql }): Promise<{ status: JobStatus; error?: string }> {
  const channel = channelByName(job.channel);
  try {
    if (!channel) throw new PermanentFailure(`unknown channel ${job.channel}`);
    if (job.kind === "alert" && !job.rule_exists) throw new PermanentFailure("the rule was deleted before delivery");
    await channel.send(job, ctx);
  } catch (err) {
    const error = errorText(err);
    const status = await markFailed(ctx.sql, job, error, backoffDelay(ctx.settings, job.attempts), err instanceof PermanentFailure);
    ctx.logger[status === "dead" ? "warn" : "info"]("notification attempt failed", { job_id: job.id, channel: job.channel, attempt: job.attempts, status, error });
    return { status, error };
  }
  await markDelivered(ctx.sql, job.id);
  ctx.logger.info("notification delivered", { job_id: job.id, channel: job.channel, attempt: job.attempts });
  return { status: "delivered" };
}

const leaseSeconds = (s: NotificationSettings) => Math.ceil((s.timeoutMs * 3) / 1000) + 30;

/** Delivers one job now, if it is due and not held by a worker (the test-send button). */
export async function deliverNow(deps: WorkerDeps, jobId: number): Promise<{ status: JobStatus; error?: string } | undefined> {
  const settings = deps.settings ?? loadNotificationSettings();
  const logger = deps.logger ?? createLogger().child({ component: "notifications" });
  const [job] = await claimJobs(deps.sql, 1, leaseSeconds(settings), jobId);
  if (!job) return undefined;
  return deliverClaimed(job, { sql: deps.sql, pubsub: deps.pubsub, settings, logger });
}

export async function startNotificationWorker(deps: WorkerDeps): Promise<NotificationWorker> {
  const settings = deps.settings ?? loadNotificationSettings();
  const logger = (deps.logger ?? createLogger()).child({ component: "notifications" });
  const ctx = { sql: deps.sql, pubsub: deps.pubsub, settings, logger };
  const worker = await startPollingWorker({
    pubsub: deps.pubsub, channel: JOBS_CHANNEL, pollMs: settings.pollMs,
    async pass(stopped) {
      let total = 0;
      while (!stopped()) {
        const jobs = await claimJobs(deps.sql, BATCH, leaseSeconds(settings));
        if (jobs.length === 0) break;
        total += jobs.length;
        const outcomes = await Promise.all(jobs.map((j) => deliverClaimed(j, ctx)));
        if (deps.counters) deps.counters.failures += outcomes.filter((o) => o.status !== "delivered").length;
      }
      return total;
    },
    onError: (err) => logger.error("notification worker: claim or record failed", { err }),
    counters: deps.counters,
  });

  logger.info("notification worker started", { poll_ms: settings.pollMs, max_attempts: settings.maxAttempts, smtp: settings.smtp.host ? `${settings.smtp.host}:${settings.smtp.port}` : "not configured" });
  return { drain: worker.drain, close: worker.close };
}

/**
 * Notification settings, read from the environment (the alerts' counterpart of core/config.ts):
 *
 *   SMTP_HOST, SMTP_PORT (587), SMTP_USER, SMTP_PASS, SMTP_FROM ("Runwatch <alerts@localhost>"),
 *   SMTP_SECURE (1 = TLS from the first byte, default when the port is 465; otherwise STARTTLS when offered)
 *   RUNWATCH_ALLOW_PRIVATE_WEBHOOKS=1      let webhook/slack targets reach private, loopback, link-local hosts
 *   RUNWATCH_NOTIFY_MAX_ATTEMPTS (8)       attempts before a job is dead
 *   RUNWATCH_NOTIFY_BACKOFF_MS (5000)      first retry delay; doubles per attempt (±20% jitter), capped at 1 h
 *   RUNWATCH_NOTIFY_POLL_MS (1000)         how often an idle worker looks for due jobs
 *   RUNWATCH_NOTIFY_TIMEOUT_MS (10000)     per delivery attempt (HTTP request, SMTP session)
 *   RUNWATCH_ALERT_SWEEP_MS (15000)        how often timer-based triggers (run_duration_above, error_rate_above) are checked
 *   RUNWATCH_ANOMALY_CONFIRM_MS (60000)    how long a metric stays out of its band before an anomaly fires
 */
import { envNumber } from "../core/env-number.js";

export interface NotificationSettings {
  readonly smtp: {
    readonly host: string | undefined;
    readonly port: number;
    readonly secure: boolean;
    readonly user: string | undefined;
    readonly pass: string | undefined;
    readonly from: string;
  };
  readonly allowPrivateTargets: boolean;
  readonly maxAttempts: number;
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
  readonly pollMs: number;
  readonly timeoutMs: number;
  readonly sweepMs: number;
  readonly anomalyConfirmMs: number;
}

const flag = (v: string | undefined): boolean => v !== undefined && /^(1|true|yes|on)$/i.test(v.trim());

export function loadNotificationSettings(env: NodeJS.ProcessEnv = process.env): NotificationSettings {
  const num = (name: string, dflt: number) => envNumber(env, name, dflt, { min: 0 });
  const port = num("SMTP_PORT", 587);
  return {
    smtp: {
      host: env.SMTP_HOST || undefined,
      port,
      secure: env.SMTP_SECURE !== undefined && env.SMTP_SECURE !== "" ? flag(env.SMTP_SECURE) : port === 465,
      user: env.SMTP_USER || undefined,
      pass: env.SMTP_PASS || undefined,
      from: env.SMTP_FROM || "Runwatch <alerts@localhost>",
    },
    allowPrivateTargets: flag(env.RUNWATCH_ALLOW_PRIVATE_WEBHOOKS),
    maxAttempts: Math.max(1, Math.floor(num("RUNWATCH_NOTIFY_MAX_ATTEMPTS", 8))),
    backoffMs: num("RUNWATCH_NOTIFY_BACKOFF_MS", 5_000),
    maxBackoffMs: 3_600_000,
    pollMs: Math.max(10, num("RUNWATCH_NOTIFY_POLL_MS", 1_000)),
    timeoutMs: Math.max(100, num("RUNWATCH_NOTIFY_TIMEOUT_MS", 10_000)),
    sweepMs: Math.max(100, num("RUNWATCH_ALERT_SWEEP_MS", 15_000)),
    anomalyConfirmMs: num("RUNWATCH_ANOMALY_CONFIRM_MS", 60_000),
  };
}

/** Delay before attempt `attempt + 1` after `attempt` failures: base·2^(attempt-1), ±20% jitter, capped. */
export function backoffDelay(s: Pick<NotificationSettings, "backoffMs" | "maxBackoffMs">, attempt: number, random = Math.random): number {
  const raw = Math.min(s.maxBackoffMs, s.backoffMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(raw * (0.8 + 0.4 * random()));
}

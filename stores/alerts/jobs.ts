/**
 * A notification job as the queue stores it (notification_jobs) and the delivery worker claims it. Types only: the
 * queries are in notifications.ts.
 */
export type JobStatus = "pending" | "retrying" | "delivered" | "dead";
export type Channel = "email" | "slack" | "webhook" | "dashboard";

/** What a notification says, fixed when the job is made (channels format it). */
export interface NotificationPayload {
  message: string;
  fired_at: string;
  url: string;
  rule: { id: number | null; name: string; trigger_type: string };
  run: {
    /** The run's id as its client named it, as in the read API (core/events/run-json.ts); jobs stored by older
     *  versions name it external_id (runIdOf reads either). */
    sdk_run_id: string;
    run_id: string;
    agent_name: string;
    status: string;
    started_at: string | null;
    ended_at: string | null;
    cost_usd: number;
    error_count: number;
    last_error: string;
  } | null;
  event: { event_id: string; event_type: string; occurred_at: string } | null;
  details: Record<string, unknown>;
  /** Firings of this rule suppressed by the cooldown since the previous notification. */
  suppressed_since_last: number;
  test: boolean;
}

/** The run id of a payload's run, whichever version stored the job. */
export const runIdOf = (run: NonNullable<NotificationPayload["run"]>): string => run.sdk_run_id ?? (run as { external_id?: string }).external_id ?? "";

export interface NotificationJob {
  id: number;
  project_id: number;
  rule_id: number | null;
  rule_name: string;
  trigger_type: string;
  channel: Channel;
  target: string;
  kind: "alert" | "test";
  payload: NotificationPayload;
  status: JobStatus;
  attempts: number;
  max_attempts: number;
  next_attempt_at: string;
  last_error: string;
  created_at: string;
  delivered_at: string | null;
}

export interface ClaimedJob extends NotificationJob {
  /** The rule's current signing secret ("" when the rule is gone). */
  secret: string;
  rule_exists: boolean;
}

/**
 * What a process tells the web processes about its background jobs (core/jobs.ts), every few seconds over pub/sub
 * (the memory bus embedded, Redis in scale mode), so that GET /metrics in any web process shows the jobs of every
 * process (web/job-reports.ts). Counts only: no tenant data travels on this channel.
 */
import type { Logger } from "./logger.js";
import type { PubSub } from "./ports/pubsub.js";
import { startPeriodicReport } from "./pubsub/periodic-report.js";

export const JOB_REPORTS_CHANNEL = "runwatch.job-reports";


/** What a job counts about itself since it started: counts only, never tenant data. */
export interface JobTelemetry {
  /** Passes run: a drain of a queue, a sweep. */
  readonly passes: number;
  /** Items a pass handled: notifications attempted, evaluation jobs run, runs deleted. */
  readonly items: number;
  /** Passes that threw, and items that failed (a failed delivery attempt, a failed evaluation). */
  readonly failures: number;
  /** Seconds spent in passes. */
  readonly seconds: number;
}

export const JOB_TELEMETRY_HELP: Readonly<Record<keyof JobTelemetry, string>> = {
  passes: "Passes a background job ran (a drain of its queue, a sweep).",
  items: "Items a background job handled (notifications attempted, evaluation jobs run, runs deleted).",
  failures: "Passes of a background job that failed, and items it failed on.",
  seconds: "Seconds a background job spent in its passes.",
};

export interface JobReport {
  /** One process (a random id per start). */
  readonly member: string;
  /** When the report was made (epoch ms). */
  readonly at: number;
  /** Each job's counters, by job name. */
  readonly jobs: Readonly<Record<string, JobTelemetry>>;
}

const isTelemetry = (v: unknown): v is JobTelemetry => {
  const t = v as JobTelemetry | null;
  return typeof t === "object" && t !== null && (Object.keys(JOB_TELEMETRY_HELP) as (keyof JobTelemetry)[]).every((k) => Number.isFinite(t[k]));
};

/** Whether a value received over pub/sub is a report (a foreign or malformed message is ignored). */
export const isJobReport = (v: unknown): v is JobReport => {
  const r = v as JobReport | null;
  return typeof r === "object" && r !== null && typeof r.member === "string" && typeof r.jobs === "object" && r.jobs !== null &&
    Object.values(r.jobs).every(isTelemetry);
};

/** Several processes' jobs as one: the counters of a job name added up. */
export function addJobTelemetry(reports: readonly JobReport[]): Record<string, JobTelemetry> {
  const out: Record<string, { passes: number; items: number; failures: number; seconds: number }> = {};
  for (const r of reports) {
    for (const [name, t] of Object.entries(r.jobs)) {
      const sum = (out[name] ??= { passes: 0, items: 0, failures: 0, seconds: 0 });
      sum.passes += t.passes;
      sum.items += t.items;
      sum.failures += t.failures;
      sum.seconds += t.seconds;
    }
  }
  return out;
}

/** Publishes the jobs' counters now and every interval; stop() ends it. */
export function startJobReporter(
  pubsub: PubSub,
  jobs: readonly { readonly name: string; telemetry(): JobTelemetry }[],
  logger: Logger,
): { stop(): void } {
  return startPeriodicReport(pubsub, { channel: JOB_REPORTS_CHANNEL, logger, what: "job" }, (member): JobReport | undefined =>
    jobs.length === 0 ? undefined : { member, at: Date.now(), jobs: Object.fromEntries(jobs.map((j) => [j.name, j.telemetry()])) });
}

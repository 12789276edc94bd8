/**
 * The background jobs' counters for GET /metrics: every process that runs jobs reports them over pub/sub
 * (core/job-reports.ts); this view keeps the latest report of each and adds up those of the last 10 s by job name.
 * Counts only, never tenant data.
 */
import { addJobTelemetry, isJobReport, JOB_REPORTS_CHANNEL, type JobTelemetry } from "../core/job-reports.js";
import type { Logger } from "../core/logger.js";
import type { PubSub } from "../core/ports/pubsub.js";
import { watchPeriodicReports } from "../core/pubsub/periodic-report.js";

export interface JobReportsView {
  /** Each job's counters over the processes that reported in the last 10 s; empty when none did. */
  jobs(): Record<string, JobTelemetry>;
  close(): Promise<void>;
}

export async function watchJobReports(pubsub: PubSub, logger: Logger, clock: () => number = Date.now): Promise<JobReportsView> {
  const reports = await watchPeriodicReports(pubsub, { channel: JOB_REPORTS_CHANNEL, logger, what: "job", clock }, isJobReport);
  return { jobs: () => addJobTelemetry(reports.live()), close: () => reports.close() };
}

/**
 * The background jobs' counters for GET /metrics: every process that runs jobs reports them over pub/sub
 * (core/job-reports.ts); this view keeps the latest report of each and adds up those of the last 10 s by job name.
 * Counts only, never tenant data.
 */
import { addJobTelemetry, isJobReport, JOB_REPORTS_CHANNEL, type JobReport, type JobTelemetry } from "../core/job-reports.js";
import type { Logger } from "../core/logger.js";
import type { PubSub } from "../core/ports/pubsub.js";
import { SILENT_AFTER_MS } from "../core/pubsub/periodic-report.js";


export interface JobReportsView {
  /** Each job's counters over the processes that reported in the last 10 s; empty when none did. */
  jobs(): Record<string, JobTelemetry>;
  close(): Promise<void>;
}

export async function watchJobReports(pubsub: PubSub, logger: Logger, clock: () => number = Date.now): Promise<JobReportsView> {
  const latest = new Map<string, { report: JobReport; receivedAt: number }>();
  const unsubscribe = await pubsub.subscribePrefix(JOB_REPORTS_CHANNEL, (_channel, message) => {
    try {
      const report = JSON.parse(message) as unknown;
      if (isJobReport(report)) latest.set(report.member, { report, receivedAt: clock() });
    } catch (err) {
      logger.debug("ignoring a malformed job report", { err });
    }
  });
  return {
    jobs() {
      const now = clock();
      for (const [member, r] of latest) if (now - r.receivedAt > SILENT_AFTER_MS) latest.delete(member);
      return addJobTelemetry([...latest.values()].map((r) => r.report));
    },
    close: () => unsubscribe(),
  };
}

/**
 * What a pipeline process tells the web processes about its progress, every few seconds over pub/sub (the
 * memory bus embedded, Redis in scale mode), so that GET /healthz can answer in any process (docs/API.md).
 * Counts only: no tenant data travels on this channel.
 */
import type { CountersSnapshot } from "./pipeline-counters.js";

export const PIPELINE_HEALTH_CHANNEL = "runwatch.pipeline-health";

/** How often a pipeline reports (core/pubsub/periodic-report.ts: every process's self-reports share the pace). */
export { REPORT_INTERVAL_MS as PIPELINE_HEALTH_INTERVAL_MS } from "./pubsub/periodic-report.js";

export interface PipelineHealthReport {
  /** One pipeline process (a random id per start). */
  readonly member: string;
  /** Events appended to the log that its consumer group has not committed (Kafka: the whole group's lag). */
  readonly lag_events: number;
  /** How long the oldest event not yet processed has waited, in ms (0 when none waits). */
  readonly oldest_unprocessed_age_ms: number;
  /** When the report was made (epoch ms). */
  readonly at: number;
  /** The pipeline's own counters (core/pipeline-counters.ts), when it could read them. */
  readonly counters?: CountersSnapshot;
}

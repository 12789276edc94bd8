/**
 * The pipeline's side of GET /healthz: how far behind it is. A tracker wraps the log handler to know the
 * batch in flight and when it last made progress; a reporter publishes that with the consumer's lag every
 * PIPELINE_HEALTH_INTERVAL_MS (core/pipeline-health.ts), where the web processes pick it up.
 */
import { startPeriodicReport } from "../core/pubsub/periodic-report.js";
import { PIPELINE_HEALTH_CHANNEL, PIPELINE_HEALTH_INTERVAL_MS, type PipelineHealthReport } from "../core/pipeline-health.js";
import type { Logger } from "../core/logger.js";
import type { LogConsumer } from "../core/ports/event-log.js";
import type { PubSub } from "../core/ports/pubsub.js";
import type { CountersSnapshot } from "../core/pipeline-counters.js";

const utf8 = new TextDecoder();

/** received_at of a log record (a LoggedEvent's JSON), or undefined when it has none. */
function receivedAtOf(record: Uint8Array | undefined): number | undefined {
  if (!record) return undefined;
  try {
    const t = Date.parse((JSON.parse(utf8.decode(record)) as { received_at?: string }).received_at ?? "");
    return Number.isNaN(t) ? undefined : t;
  } catch {
    return undefined;
  }
}

/** Knows the oldest event the pipeline has not finished: the head of the batch in flight. */
export class ProgressTracker {
  private inFlightSince: number | undefined;
  private lastProgressAt = Date.now();

  /** Wraps a log handler of raw records. */
  track<T extends readonly Uint8Array[]>(handler: (records: T) => Promise<void>): (records: T) => Promise<void> {
    return async (records) => {
      this.inFlightSince = receivedAtOf(records[0]) ?? Date.now();
      await handler(records);
      this.inFlightSince = undefined;
      this.lastProgressAt = Date.now();
    };
  }

  /**
   * Age of the oldest unprocessed event: the head of the batch in flight; between batches with a lag, at least
   * the time since the last batch finished.
   */
  oldestAgeMs(lag: number, now = Date.now()): number {
    if (this.inFlightSince !== undefined) return Math.max(0, now - this.inFlightSince);
    if (lag <= 0) {
      this.lastProgressAt = now;
      return 0;
    }
    return Math.max(0, now - this.lastProgressAt);
  }
}

/** Publishes this pipeline's health (and its counters, when `counters` answers) now and every interval; stop() ends it. */
export function startHealthReporter(
  pubsub: PubSub,
  consumer: Pick<LogConsumer, "lag">,
  tracker: ProgressTracker,
  logger: Logger,
  counters: () => CountersSnapshot | undefined | Promise<CountersSnapshot | undefined> = () => undefined,
): { stop(): void } {
  return startPeriodicReport(pubsub, { channel: PIPELINE_HEALTH_CHANNEL, intervalMs: PIPELINE_HEALTH_INTERVAL_MS, logger, what: "pipeline health" }, async (member): Promise<PipelineHealthReport> => {
    const lag = await consumer.lag();
    const counts = await Promise.resolve(counters()).catch(() => undefined); // a thread starting or gone: the report goes without
    return { member, lag_events: lag, oldest_unprocessed_age_ms: tracker.oldestAgeMs(lag), at: Date.now(), counters: counts };
  });
}

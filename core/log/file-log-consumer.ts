/**
 * A file-log consumer: one per group and process. It waits for durable records, lets a small batch fill for up
 * to maxWaitMs, hands the batch to the handler until it succeeds (core/log/delivery.ts) and commits the group's
 * offset durably afterwards: at-least-once delivery, nothing skipped. Any other error (an unreadable segment,
 * a bug) is logged, the read position goes back to the committed offset, and the loop carries on after a backoff.
 */
import type { Logger } from "../logger.js";
import type { ConsumeOptions, LogConsumer } from "../ports/event-log.js";
import { backoffDelay, deliver, type Backoff } from "./delivery.js";
import { LogCursor, type SegmentSource } from "./file-log-cursor.js";
import type { OffsetStore } from "./offset-store.js";
import { safeLog } from "./safe-log.js";

/** What the consumer needs of the log besides reading: where retention runs after a commit. */
export interface ConsumerHost extends SegmentSource {
  readonly logger: Logger;
  afterCommit(): Promise<void>;
}

export class FileConsumer implements LogConsumer {
  private stopping = false;
  private running: Promise<void> | null = null;
  private wakers = new Set<{ on: "data" | "stop"; wake: () => void }>();
  private readonly cursor: LogCursor;

  constructor(
    private readonly log: ConsumerHost,
    private readonly store: OffsetStore,
    private readonly options: ConsumeOptions,
    private readonly backoff: Backoff,
    private readonly onStopped: () => void,
  ) {
    this.cursor = new LogCursor(log, log.logger, store.committed, options.group);
  }

  start(): void {
    this.running = this.supervise();
  }

  /** run() handles its own errors; should it still throw (a bug), it is logged and started again, never left dead. */
  private async supervise(): Promise<void> {
    for (let crashes = 0; !this.stopping; crashes++) {
      try {
        await this.run();
      } catch (err) {
        const delay = backoffDelay(this.backoff, crashes);
        safeLog(this.log.logger, "error", "event log consumer loop crashed; restarting it", { group: this.options.group, retry_in_ms: delay, err });
        await this.cursor.reset(this.store.committed).catch(() => {});
        await this.sleep(delay, "stop");
      }
    }
  }

  /** New durable data ("data") or stop() ends the matching sleeps. */
  wake(reason: "data" | "stop"): void {
    for (const w of this.wakers) if (reason === "stop" || w.on === "data") w.wake();
  }

  /** Sleeps up to ms; new data (if on === "data") or stop() ends the sleep early. */
  private sleep(ms: number, on: "data" | "stop"): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const entry = {
        on,
        wake: () => {
          if (timer !== undefined) clearTimeout(timer);
          this.wakers.delete(entry);
          resolve();
        },
      };
      const timer = Number.isFinite(ms) ? setTimeout(entry.wake, ms) : undefined;
      this.wakers.add(entry);
    });
  }

  private available(): number {
    return this.log.endOffset() - this.cursor.offset;
  }

  /** The consumer loop; it ends only through stop(). */
  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      try {
        await this.step();
        failures = 0;
      } catch (err) {
        const delay = backoffDelay(this.backoff, failures++);
        safeLog(this.log.logger, "error", "event log consumer failed; retrying from the committed offset", {
          group: this.options.group,
          committed: this.store.committed,
          attempt: failures,
          retry_in_ms: delay,
          err,
        });
        await this.cursor.reset(this.store.committed);
        await this.sleep(delay, "stop");
      }
    }
    await this.cursor.close();
  }

  /** Waits for data, reads one batch, hands it to the handler and commits. */
  private async step(): Promise<void> {
    const { maxBatch, maxWaitMs } = this.options;
    if (this.available() <= 0) {
      await this.sleep(Infinity, "data");
      return;
    }
    // Let a small batch fill for up to maxWaitMs (bigger batches mean cheaper storage writes).
    const deadline = Date.now() + maxWaitMs;
    while (!this.stopping && this.available() < maxBatch && Date.now() < deadline) {
      await this.sleep(deadline - Date.now(), "data");
    }
    if (this.stopping) return;
    const batch = await this.cursor.read(maxBatch, this.options.maxBytes);
    if (batch.length === 0) return;
    const firstOffset = this.cursor.offset - batch.length;
    const delivered = await deliver(this.options.handler, batch, {
      backoff: this.backoff,
      stopped: () => this.stopping,
      sleep: (ms) => this.sleep(ms, "stop"),
      onRetry: (attempt, retryInMs, err) =>
        safeLog(this.log.logger, "warn", "event log handler failed; retrying the same batch", {
          group: this.options.group, attempt, retry_in_ms: retryInMs, batch_size: batch.length, first_offset: firstOffset, err,
        }),
    });
    if (!delivered) {
      // Stopped before the handler succeeded: nothing committed; the batch comes again after a restart.
      await this.cursor.reset(this.store.committed);
      return;
    }
    try {
      await this.store.commit(this.cursor.offset);
      await this.log.afterCommit();
    } catch (err) {
      // Not fatal: the next commit writes a later offset; a crash before it only redelivers (idempotent).
      safeLog(this.log.logger, "error", "could not commit consumer offset", { group: this.options.group, err });
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake("stop");
    await this.running;
    this.onStopped();
  }

  async lag(): Promise<number> {
    return Math.max(0, this.log.endOffset() - this.store.committed);
  }
}

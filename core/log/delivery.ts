/**
 * What both event logs do with a batch once it is read: hand it to the consumer's handler until the handler
 * succeeds. A batch is never skipped (the pipeline sets poison events aside itself, pipeline/isolation.ts); a
 * failure is logged and retried after a backoff, the same for the file log and Kafka.
 */

export interface Backoff {
  readonly baseMs: number;
  readonly maxMs: number;
}

/** A failing handler is retried after 100 ms, doubling up to 10 s. */
export const HANDLER_BACKOFF: Backoff = { baseMs: 100, maxMs: 10_000 };

export const backoffDelay = (b: Backoff, failures: number): number => Math.min(b.maxMs, b.baseMs * 2 ** Math.min(failures, 20));

export interface DeliveryOptions {
  readonly backoff: Backoff;
  /** True once the consumer is stopping: no new attempt starts (nothing is committed, the batch comes again). */
  readonly stopped: () => boolean;
  /** Waits between attempts; should return early when the consumer stops. */
  readonly sleep: (ms: number) => Promise<void>;
  /** Reports a failed attempt (1-based) before the wait. */
  readonly onRetry: (attempt: number, retryInMs: number, err: unknown) => void;
}

/** Hands `batch` to `handler` until it resolves; false when the consumer stopped before it did. */
export async function deliver<T>(handler: (batch: readonly T[]) => Promise<void>, batch: readonly T[], opts: DeliveryOptions): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    if (opts.stopped()) return false;
    try {
      await handler(batch);
      return true;
    } catch (err) {
      const delay = backoffDelay(opts.backoff, attempt);
      opts.onRetry(attempt + 1, delay, err);
      if (opts.stopped()) return false;
      await opts.sleep(delay);
    }
  }
}

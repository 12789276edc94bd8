import type { LoggedEvent } from "../events/schema.js";
import type { EncodedEvents } from "../log/encoded-batch.js";

/**
 * The durable log between ingest and the pipeline (Kafka in scale mode, an fsync'd file log embedded).
 * Events with the same logKey (user + run) are delivered in append order to one consumer at a time.
 */
export interface EventLog {
  /**
   * Appends events; resolves only when they are durable (fsync'd, or acknowledged by all in-sync replicas).
   * Rejects with core/errors Unavailable when the log cannot take them (ingest answers 503 + Retry-After).
   */
  append(events: readonly LoggedEvent[]): Promise<void>;
  /** append() of events already serialised, e.g. on another thread (core/log/encoded-batch.ts). */
  appendEncoded(events: EncodedEvents): Promise<void>;
  /**
   * Consumes as member of `group`. The handler receives batches (≤ maxBatch events, waiting ≤ maxWaitMs to
   * fill one); offsets are committed only after the handler resolves. A rejected handler is retried with
   * backoff, so delivery is at-least-once: handlers must be idempotent (the store dedups on event_id).
   */
  consume(options: ConsumeOptions): Promise<LogConsumer>;
  /**
   * consume() with the same delivery guarantees, but each event arrives as the UTF-8 JSON bytes the log holds,
   * not decoded: for a consumer that hands whole batches to another thread (pipeline/thread), which decodes them
   * there instead of on the thread that serves ingest.
   */
  consumeEncoded(options: ConsumeOptions<Uint8Array>): Promise<LogConsumer>;
  close(): Promise<void>;
}

export interface ConsumeOptions<T = LoggedEvent> {
  readonly group: string;
  readonly maxBatch: number;
  readonly maxWaitMs: number;
  readonly handler: (batch: readonly T[]) => Promise<void>;
  /**
   * Called when this member's share of the log may have changed (a consumer-group rebalance). Keys can have
   * been processed by another member meanwhile, so state cached per key must be dropped. A single-member log
   * (the embedded file log) never calls it.
   */
  readonly onRebalance?: () => void;
}

export interface LogConsumer {
  /** Stops after the batch in flight is handled and committed. */
  stop(): Promise<void>;
  /** Events appended but not yet committed by this group (consumer lag). */
  lag(): Promise<number>;
}

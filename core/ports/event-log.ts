import type { EncodedEvents } from "../events/wire.js";

/**
 * The durable log between ingest and the pipeline (Kafka in scale mode, an fsync'd file log embedded).
 * Events travel in their wire form (core/events/wire.ts: UTF-8 JSON records with their log keys); events with
 * the same log key (user + run) are delivered in append order to one consumer at a time.
 * core/log/events.ts has appendEvents / consumeEvents for callers that hold decoded events.
 */
export interface EventLog {
  /**
   * Appends encoded events; resolves only when they are durable (fsync'd, or acknowledged by all in-sync
   * replicas). Rejects with core/errors Unavailable when the log cannot take them (ingest answers 503 + Retry-After).
   */
  append(events: EncodedEvents): Promise<void>;
  /**
   * Consumes as member of `group`. The handler receives batches of records as the log holds them (≤ maxBatch,
   * waiting ≤ maxWaitMs to fill one), undecoded: the pipeline decodes them (on its own thread) and sets aside
   * records that are not events. Offsets are committed only after the handler resolves; a rejected handler is
   * retried with backoff (core/log/delivery.ts), so delivery is at-least-once: handlers must be idempotent.
   */
  consume(options: ConsumeOptions): Promise<LogConsumer>;
  close(): Promise<void>;
}

export interface ConsumeOptions<T = Uint8Array> {
  readonly group: string;
  readonly maxBatch: number;
  /**
   * A batch stops growing once it holds this many bytes (it always holds at least one record); default unbounded.
   * Records differ in size by orders of magnitude (an event, an OTLP export of hundreds of spans).
   */
  readonly maxBytes?: number;
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

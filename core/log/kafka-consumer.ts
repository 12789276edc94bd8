/**
 * The Kafka log's consumer: one consumer group member. kafkajs fetches every assigned partition and calls
 * eachBatch per partition (concurrently); a coalescer merges those partition batches into handler batches of up
 * to maxBatch records and calls the handler one batch at a time (the pipeline sees a serial stream, and the
 * store gets large inserts). Offsets are committed explicitly, per partition, only after the handler resolved
 * for every record up to that offset (autoCommit off). A failed handler is retried with backoff
 * (core/log/delivery.ts); heartbeats continue while a long batch runs, so the member is not evicted.
 */
import { PartitionAssigners, type Admin, type Consumer, type EachBatchPayload, type Kafka } from "kafkajs";
import type { Logger } from "../logger.js";
import type { ConsumeOptions, LogConsumer } from "../ports/event-log.js";
import { deliver, HANDLER_BACKOFF } from "./delivery.js";
import { coPartitionedAssigner } from "./kafka-assigner.js";

/**
 * The Kafka group id of a logical consumer group: namespaced by topic. kafkajs' assigner spreads the
 * partitions of every topic any member subscribes to over all members of a group id, so two deployments
 * (or test clusters) with different topics sharing the group id "pipeline" would be handed each other's
 * partitions and leave them unconsumed.
 */
export const consumerGroupId = (topic: string, group: string): string => `${topic}.${group}`;

/** Partitions for a topic we create (upper bound on useful pipeline processes). */
export const DEFAULT_PARTITIONS = 12;

const SESSION_TIMEOUT_MS = 10_000;
const HEARTBEAT_INTERVAL_MS = 1_000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** One partition batch waiting in the coalescer, with the offset to commit once it is handled. */
interface Slice {
  readonly partition: number;
  readonly events: Uint8Array[];
  readonly nextOffset: string;
  readonly done: (ok: boolean) => void;
}

export class KafkaConsumer implements LogConsumer {
  private readonly consumer: Consumer;
  private readonly waiting: Slice[] = [];
  private flushing = false;
  private flushTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private readonly log: Logger;
  private readonly groupId: string;

  constructor(
    kafka: Kafka,
    private readonly admin: Admin,
    private readonly topic: string,
    private readonly opts: ConsumeOptions,
    logger: Logger,
    /** This process's name for kafka-assigner.ts: the consumers of both lanes in one process share it. */
    instance: string,
  ) {
    this.groupId = consumerGroupId(topic, opts.group);
    this.log = logger.child({ group: this.groupId });
    this.consumer = kafka.consumer({
      groupId: this.groupId,
      sessionTimeout: SESSION_TIMEOUT_MS,
      heartbeatInterval: HEARTBEAT_INTERVAL_MS,
      maxWaitTimeInMs: Math.max(10, opts.maxWaitMs),
      maxBytesPerPartition: 4 * 1024 * 1024,
      allowAutoTopicCreation: false,
      // Round robin stays second so that members of an older release (round robin only) can share the group.
      partitionAssigners: [coPartitionedAssigner(instance), PartitionAssigners.roundRobin],
      // Keep the member alive through broker restarts: kafkajs restarts the consumer after a crash.
      retry: { retries: 10, initialRetryTime: 300, maxRetryTime: 5_000, restartOnFailure: async () => !this.stopping },
    });
  }

  async start(): Promise<void> {
    // Every (re)join may hand this member partitions another member advanced meanwhile.
    this.consumer.on(this.consumer.events.GROUP_JOIN, () => this.opts.onRebalance?.());
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: [this.topic], fromBeginning: true });
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: DEFAULT_PARTITIONS,
      eachBatch: (payload) => this.eachBatch(payload),
    });
  }

  private async eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    if (!batch.messages.length) return;
    // Records go to the handler as bytes; the pipeline dead-letters any that are not events.
    const events: Uint8Array[] = [];
    for (const m of batch.messages) if (m.value) events.push(m.value);
    const last = batch.messages[batch.messages.length - 1].offset;
    const nextOffset = (BigInt(last) + 1n).toString();
    // Keep the session alive while the coalescer and handler work (kafkajs throttles to heartbeatInterval).
    const beat = setInterval(() => { payload.heartbeat().catch(() => {}); }, HEARTBEAT_INTERVAL_MS);
    try {
      const ok = await this.enqueue(batch.partition, events, nextOffset);
      if (!ok) return; // stopping before it was handled: leave it uncommitted, a member re-reads it
      payload.resolveOffset(last);
      await payload.commitOffsetsIfNecessary({
        topics: [{ topic: this.topic, partitions: [{ partition: batch.partition, offset: nextOffset }] }],
      });
    } finally {
      clearInterval(beat);
    }
  }

  /** Adds a partition batch to the coalescer; resolves true once the handler stored every event of it. */
  private enqueue(partition: number, events: Uint8Array[], nextOffset: string): Promise<boolean> {
    return new Promise((resolve) => {
      this.waiting.push({ partition, events, nextOffset, done: resolve });
      this.scheduleFlush();
    });
  }

  private scheduleFlush(): void {
    if (this.flushing || this.flushTimer) return;
    const pendingEvents = this.waiting.reduce((n, s) => n + s.events.length, 0);
    // A full batch goes at once; otherwise wait a moment so other partitions' batches join it.
    const delay = pendingEvents >= this.opts.maxBatch ? 0 : Math.min(5, this.opts.maxWaitMs);
    this.flushTimer = setTimeout(() => { this.flushTimer = undefined; void this.flush(); }, delay);
  }

  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.waiting.length) {
        const slices: Slice[] = [];
        let n = 0;
        while (this.waiting.length && (slices.length === 0 || n + this.waiting[0].events.length <= this.opts.maxBatch)) {
          const s = this.waiting.shift()!;
          slices.push(s);
          n += s.events.length;
        }
        const ok = await this.handleWithRetry(slices);
        for (const s of slices) s.done(ok);
      }
    } finally {
      this.flushing = false;
    }
  }

  /** Runs the handler over the slices in chunks of ≤ maxBatch records (and maxBytes), each until it succeeds (core/log/delivery.ts). */
  private async handleWithRetry(slices: readonly Slice[]): Promise<boolean> {
    const all = slices.flatMap((s) => s.events);
    const maxBytes = this.opts.maxBytes ?? Infinity;
    for (let i = 0; i < all.length; ) {
      let end = i + 1;
      for (let bytes = all[i]!.byteLength; end < all.length && end - i < this.opts.maxBatch && bytes < maxBytes; end++) bytes += all[end]!.byteLength;
      const chunk = all.slice(i, end);
      i = end;
      const ok = await deliver(this.opts.handler, chunk, {
        backoff: HANDLER_BACKOFF,
        stopped: () => this.stopping,
        sleep,
        onRetry: (attempt, retryInMs, err) => this.log.warn("batch handler failed; retrying", { attempt, events: chunk.length, retryInMs, error: err }),
      });
      if (!ok) return false;
    }
    return true;
  }

  async lag(): Promise<number> {
    const [ends, committed] = await Promise.all([
      this.admin.fetchTopicOffsets(this.topic),
      this.admin.fetchOffsets({ groupId: this.groupId, topics: [this.topic] }),
    ]);
    const done = new Map<number, bigint>();
    for (const t of committed) for (const p of t.partitions) done.set(p.partition, BigInt(p.offset));
    let lag = 0n;
    for (const p of ends) {
      const high = BigInt(p.high);
      const c = done.get(p.partition) ?? -1n;
      lag += high - (c < 0n ? BigInt(p.low) : c);
    }
    return Number(lag);
  }

  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.flushTimer) { clearTimeout(this.flushTimer); this.flushTimer = undefined; }
    // Batches not yet handed to the handler are left uncommitted (a member re-reads them).
    for (const s of this.waiting.splice(0)) s.done(false);
    // consumer.stop() waits for the batch in flight: it is handled and committed, or abandoned on stop.
    await this.consumer.stop().catch((err) => this.log.warn("consumer stop failed", { error: err }));
    await this.consumer.disconnect().catch(() => {});
  }
}

/**
 * EventLog on Apache Kafka (kafkajs), the scale-mode log between ingest and the pipeline.
 *
 * Producer: idempotent, acks=-1 (all in-sync replicas), message key = logKey (user + run), so the default
 * partitioner keeps a run in one partition, in append order. Concurrent append() calls are grouped into one
 * send (group commit) and sends are serialized: with one send in flight, per-key order is the order in which
 * appends resolved. A broker outage turns into core/errors Unavailable within APPEND_TIMEOUT_MS, so ingest
 * answers 503 + Retry-After instead of hanging; appends that timed out before their send started are dropped
 * from the queue (never sent after the client was told "no").
 *
 * Consumer: one consumer group member; kafkajs fetches every assigned partition and calls eachBatch per
 * partition (concurrently). A coalescer merges those partition batches into handler batches of up to
 * maxBatch events and calls the handler one batch at a time (the pipeline sees a serial stream, and the
 * store gets large inserts). Offsets are committed explicitly, per partition, only after the handler resolved
 * for every event up to that offset (autoCommit off). A failed handler is retried with backoff; heartbeats
 * continue while a long batch runs, so the member is not evicted. A member that dies without committing
 * leaves its partitions to a peer after the session timeout, which re-reads from the last commit:
 * at-least-once, deduplicated by event_id in the store.
 */
import { Kafka, logLevel as KafkaLogLevel, type Consumer, type EachBatchPayload, type LogEntry, type Producer, type Admin } from "kafkajs";
import type { Config } from "../config.js";
import { Unavailable } from "../errors.js";
import { logKey } from "../events/schema.js";
import { createLogger, type Logger } from "../logger.js";
import type { ConsumeOptions, EventLog, LogConsumer } from "../ports/event-log.js";
import { decodeRecord, recordAt } from "./encoded-batch.js";

/**
 * The Kafka group id of a logical consumer group: namespaced by topic. kafkajs' assigner spreads the
 * partitions of every topic any member subscribes to over all members of a group id, so two deployments
 * (or test clusters) with different topics sharing the group id "pipeline" would be handed each other's
 * partitions and leave them unconsumed.
 */
export const consumerGroupId = (topic: string, group: string): string => `${topic}.${group}`;

/** Partitions for a topic we create (upper bound on useful pipeline processes). */
export const DEFAULT_PARTITIONS = 12;
/** How long a new topic may take to get its partition leaders. */
const TOPIC_READY_TIMEOUT_MS = 15_000;
/** How long an append may wait for the broker before it is answered with Unavailable. */
const APPEND_TIMEOUT_MS = 5_000;
/** Upper bound of one produce request (sum of message sizes); stays below default broker limits. */
const MAX_SEND_BYTES = 900 * 1024;
const SESSION_TIMEOUT_MS = 10_000;
const HEARTBEAT_INTERVAL_MS = 1_000;
const HANDLER_RETRY_MIN_MS = 200;
const HANDLER_RETRY_MAX_MS = 10_000;

export interface KafkaLogOptions {
  readonly partitions?: number;
  readonly appendTimeoutMs?: number;
  readonly clientId?: string;
  readonly logger?: Logger;
}

interface PendingAppend {
  readonly messages: { key: string; value: string | Buffer }[];
  readonly bytes: number;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
  /** Set when the caller was already answered (timeout): skip it if its send has not started. */
  settled: boolean;
}

/** kafkajs warnings about choices made on purpose here (bounded idempotent retries, v2 partitioner). */
const EXPECTED_WARNINGS = /Limiting retries for the idempotent producer|switched default partitioner/;

const kafkaLogCreator = (logger: Logger) => () => ({ level, log }: LogEntry) => {
  const { message, ...fields } = log;
  if (EXPECTED_WARNINGS.test(message)) return;
  if (level <= KafkaLogLevel.ERROR) logger.error(`kafka: ${message}`, fields);
  else if (level === KafkaLogLevel.WARN) logger.warn(`kafka: ${message}`, fields);
  else logger.debug(`kafka: ${message}`, fields);
};

export const unavailable = (err: unknown): Unavailable =>
  err instanceof Unavailable
    ? err
    : new Unavailable({ service: "kafka", message: `event log unavailable: ${err instanceof Error ? err.message : String(err)}`, cause: err });

export async function openKafkaLog(config: Config, options: KafkaLogOptions = {}): Promise<EventLog> {
  if (!config.kafkaBrokers?.length) throw new Error("openKafkaLog needs KAFKA_BROKERS");
  const logger = options.logger ?? createLogger(config.logLevel, { component: "kafka-log" });
  const topic = config.kafkaTopic;
  const appendTimeoutMs = options.appendTimeoutMs ?? APPEND_TIMEOUT_MS;
  const kafka = new Kafka({
    clientId: options.clientId ?? `runwatch-${process.pid}`,
    brokers: [...config.kafkaBrokers],
    connectionTimeout: 1_000,
    requestTimeout: 10_000,
    // Bounded retries everywhere: an outage must surface (Unavailable / retried batch), not hang a caller.
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 2_000 },
    logLevel: KafkaLogLevel.WARN,
    logCreator: kafkaLogCreator(logger),
  });

  const admin = kafka.admin();
  try {
    await admin.connect();
    await ensureTopic(admin, topic, options.partitions ?? DEFAULT_PARTITIONS, logger);
  } catch (err) {
    await admin.disconnect().catch(() => {});
    throw unavailable(err);
  }

  // Idempotent: broker-side dedup of producer retries, one send in flight (sequence numbers stay ordered).
  // Retries are bounded so a send fails (→ Unavailable) during an outage instead of retrying forever;
  // a retry that was in fact written is a duplicate only in the log, and the store dedups on event_id.
  const producer: Producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1_000 },
  });
  try {
    await producer.connect();
  } catch (err) {
    await admin.disconnect().catch(() => {});
    throw unavailable(err);
  }

  const queue: PendingAppend[] = [];
  let sending = false;
  let closed = false;
  const consumers = new Set<Pick<KafkaConsumer<unknown>, "stop">>();

  async function pump(): Promise<void> {
    if (sending) return;
    sending = true;
    try {
      while (queue.length) {
        const batch: PendingAppend[] = [];
        let bytes = 0;
        while (queue.length && (batch.length === 0 || bytes + queue[0].bytes <= MAX_SEND_BYTES)) {
          const p = queue.shift()!;
          if (p.settled) continue; // timed out before its send started: the caller got 503, do not send
          batch.push(p);
          bytes += p.bytes;
        }
        if (!batch.length) continue;
        try {
          await producer.send({ topic, acks: -1, messages: batch.flatMap((p) => p.messages) });
          for (const p of batch) { p.settled = true; p.resolve(); }
        } catch (err) {
          logger.warn("append failed", { error: err, events: batch.reduce((n, p) => n + p.messages.length, 0) });
          for (const p of batch) { p.settled = true; p.reject(unavailable(err)); }
        }
      }
    } finally {
      sending = false;
    }
  }

  /** Queues messages for the next send (appends of the same tick share one). */
  function send(messages: { key: string; value: string | Buffer }[]): Promise<void> {
    if (closed) return Promise.reject(new Unavailable({ service: "kafka", message: "event log is closed" }));
    if (!messages.length) return Promise.resolve();
    const bytes = messages.reduce((n, m) => n + m.key.length + (typeof m.value === "string" ? Buffer.byteLength(m.value) : m.value.byteLength) + 64, 0);
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (pending.settled) return;
        pending.settled = true;
        reject(new Unavailable({ service: "kafka", message: `event log did not acknowledge within ${appendTimeoutMs} ms` }));
      }, appendTimeoutMs);
      const pending: PendingAppend = {
        messages,
        bytes,
        settled: false,
        resolve: () => { clearTimeout(timer); resolve(); },
        // A send that fails after the timeout already answered the caller: nothing more to say.
        reject: (err) => { clearTimeout(timer); reject(err); },
      };
      queue.push(pending);
      // Let appends of the same tick join this send (group commit), then send.
      if (!sending) queueMicrotask(() => void pump());
    });
  }

  async function subscribe<T>(opts: ConsumeOptions<T>, decode: (value: Buffer) => T): Promise<LogConsumer> {
    if (closed) throw new Error("event log is closed");
    const c = new KafkaConsumer(kafka, admin, topic, opts, decode, logger);
    await c.start();
    consumers.add(c);
    return {
      lag: () => c.lag(),
      stop: async () => { consumers.delete(c); await c.stop(); },
    };
  }

  return {
    append(events) {
      return send(events.map((e) => ({ key: logKey(e), value: JSON.stringify(e) })));
    },

    appendEncoded(events) {
      return send(events.keys.map((key, i) => {
        const r = recordAt(events, i);
        return { key, value: Buffer.from(r.buffer, r.byteOffset, r.byteLength) };
      }));
    },

    consume(opts) {
      return subscribe(opts, decodeRecord);
    },

    consumeEncoded(opts) {
      return subscribe(opts, keepBytes);
    },

    async close() {
      if (closed) return;
      closed = true;
      await Promise.allSettled([...consumers].map((c) => c.stop()));
      consumers.clear();
      // Let queued appends finish (they were accepted before close).
      const deadline = Date.now() + appendTimeoutMs;
      while ((sending || queue.some((p) => !p.settled)) && Date.now() < deadline) await sleep(10);
      await producer.disconnect().catch(() => {});
      await admin.disconnect().catch(() => {});
    },
  };
}

async function ensureTopic(admin: Admin, topic: string, partitions: number, logger: Logger): Promise<void> {
  const existing = await admin.listTopics();
  if (existing.includes(topic)) return;
  try {
    const created = await admin.createTopics({
      // kafkajs' own wait retries only LEADER_NOT_AVAILABLE; a KRaft broker may first answer
      // UNKNOWN_TOPIC_OR_PARTITION for a topic it has just created, so the wait is ours.
      waitForLeaders: false,
      topics: [{ topic, numPartitions: partitions, configEntries: [{ name: "max.message.bytes", value: String(10 * 1024 * 1024) }] }],
    });
    if (created) logger.info("created topic", { topic, partitions });
  } catch (err) {
    // Another process created it at the same moment.
    if (!(err instanceof Error && /already exists/i.test(err.message))) throw err;
  }
  await waitForLeaders(admin, topic);
}

/** Waits until every partition of a new topic has a leader, riding out the broker's retriable answers. */
async function waitForLeaders(admin: Admin, topic: string, timeoutMs = TOPIC_READY_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      const parts = topics.find((t) => t.name === topic)?.partitions ?? [];
      if (parts.length && parts.every((p) => p.leader >= 0)) return;
    } catch (err) {
      if (!(err as { retriable?: boolean }).retriable || Date.now() > deadline) throw err;
    }
    if (Date.now() > deadline) throw new Error(`topic ${topic} has no leader after ${timeoutMs} ms`);
    await sleep(100);
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** One partition batch waiting in the coalescer, with the offset to commit once it is handled. */
const keepBytes = (value: Buffer): Uint8Array => value;

interface Slice<T> {
  readonly partition: number;
  readonly events: T[];
  readonly nextOffset: string;
  readonly done: (ok: boolean) => void;
}

class KafkaConsumer<T> implements LogConsumer {
  private readonly consumer: Consumer;
  private readonly waiting: Slice<T>[] = [];
  private flushing = false;
  private flushTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private readonly log: Logger;
  private readonly groupId: string;

  constructor(
    kafka: Kafka,
    private readonly admin: Admin,
    private readonly topic: string,
    private readonly opts: ConsumeOptions<T>,
    private readonly decode: (value: Buffer) => T,
    logger: Logger,
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
    const events: T[] = [];
    for (const m of batch.messages) {
      try {
        if (m.value) events.push(this.decode(m.value));
      } catch (err) {
        // A record that is not ours (or corrupt) cannot be processed by retrying: log it and move past it.
        this.log.error("skipping undecodable log record", { partition: batch.partition, offset: m.offset, error: err });
      }
    }
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
  private enqueue(partition: number, events: T[], nextOffset: string): Promise<boolean> {
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
        const slices: Slice<T>[] = [];
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

  /** Runs the handler over the slices in chunks of ≤ maxBatch, retrying with backoff until it succeeds. */
  private async handleWithRetry(slices: readonly Slice<T>[]): Promise<boolean> {
    const all = slices.flatMap((s) => s.events);
    for (let i = 0; i < all.length || (i === 0 && all.length === 0); i += this.opts.maxBatch) {
      const chunk = all.slice(i, i + this.opts.maxBatch);
      if (!chunk.length) break;
      let wait = HANDLER_RETRY_MIN_MS;
      for (let attempt = 1; ; attempt++) {
        if (this.stopping) return false;
        try {
          await this.opts.handler(chunk);
          break;
        } catch (err) {
          this.log.warn("batch handler failed; retrying", { attempt, events: chunk.length, retryInMs: wait, error: err });
          await sleep(wait);
          wait = Math.min(HANDLER_RETRY_MAX_MS, wait * 2);
        }
      }
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

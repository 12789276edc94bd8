/**
 * EventLog on Apache Kafka (kafkajs), the scale-mode log between ingest and the pipeline.
 *
 * Producer: idempotent, acks=-1 (all in-sync replicas), message key = the run key (core/events/run-key.ts: user + run), so the default
 * partitioner keeps a run in one partition, in append order. Concurrent append() calls are grouped into one
 * send (group commit, group-commit.ts) and sends are serialized: with one send in flight, per-key order is the order in which
 * appends resolved. A broker outage turns into core/errors Unavailable within APPEND_TIMEOUT_MS, so ingest
 * answers 503 + Retry-After instead of hanging; appends that timed out before their send started are dropped
 * from the queue (never sent after the client was told "no").
 *
 * Consumer (kafka-consumer.ts): one consumer group member per consume(); offsets are committed per partition
 * only after the handler resolved for every record up to them. A member that dies without committing leaves
 * its partitions to a peer after the session timeout, which re-reads from the last commit: at-least-once,
 * deduplicated by event_id in the store.
 */
import { randomUUID } from "node:crypto";
import os from "node:os";
import { Kafka, logLevel as KafkaLogLevel, type Admin, type LogEntry, type Producer } from "kafkajs";
import type { Config } from "../config.js";
import { Unavailable } from "../errors.js";
import { createLogger, type Logger } from "../logger.js";
import { recordAt } from "../events/wire.js";
import type { EventLog } from "../ports/event-log.js";
import { GroupCommit, type QueuedWrite } from "./group-commit.js";
import { DEFAULT_PARTITIONS, KafkaConsumer } from "./kafka-consumer.js";

export { consumerGroupId, DEFAULT_PARTITIONS } from "./kafka-consumer.js";


/** One name per process for the partition assignment: its consumers of both lanes get the same partitions. */
const PROCESS_INSTANCE = `${os.hostname()}:${process.pid}:${randomUUID()}`;

/** How long a new topic may take to get its partition leaders. */
const TOPIC_READY_TIMEOUT_MS = 15_000;
/** How long an append may wait for the broker before it is answered with Unavailable. */
const APPEND_TIMEOUT_MS = 5_000;
/** Upper bound of one produce request (sum of message sizes); stays below default broker limits. */
const MAX_SEND_BYTES = 900 * 1024;

export interface KafkaLogOptions {
  /** Default config.kafkaTopic. */
  readonly topic?: string;
  /** This process's name in the partition assignment (kafka-assigner.ts); default one per process. */
  readonly instance?: string;
  readonly partitions?: number;
  /**
   * Create the topic with as many partitions as this one has (when it exists): the bulk lane's topic must match the
   * main topic's count for a key to land on the same partition index in both (kafka-assigner.ts).
   */
  readonly partitionsLike?: string;
  readonly appendTimeoutMs?: number;
  readonly clientId?: string;
  readonly logger?: Logger;
}

interface PendingAppend extends QueuedWrite {
  readonly messages: { key: string; value: Buffer }[];
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
  const topic = options.topic ?? config.kafkaTopic;
  const instance = options.instance ?? PROCESS_INSTANCE;
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
    const like = options.partitionsLike ? await partitionCount(admin, options.partitionsLike) : undefined;
    await ensureTopic(admin, topic, like ?? options.partitions ?? DEFAULT_PARTITIONS, logger);
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

  const queue = new GroupCommit<PendingAppend>(async (round) => {
    try {
      await producer.send({ topic, acks: -1, messages: round.flatMap((p) => p.messages) });
    } catch (err) {
      logger.warn("append failed", { error: err, events: round.reduce((n, p) => n + p.messages.length, 0) });
      throw unavailable(err);
    }
  }, MAX_SEND_BYTES);
  let closed = false;
  const consumers = new Set<KafkaConsumer>();

  /** Queues messages for the next send (appends of the same tick share one); Unavailable after appendTimeoutMs. */
  function send(messages: { key: string; value: Buffer }[]): Promise<void> {
    if (closed) return Promise.reject(new Unavailable({ service: "kafka", message: "event log is closed" }));
    if (!messages.length) return Promise.resolve();
    const bytes = messages.reduce((n, m) => n + m.key.length + m.value.byteLength + 64, 0);
    return new Promise<void>((resolve, reject) => {
      const pending: PendingAppend = {
        messages,
        bytes,
        settled: false,
        resolve: () => { clearTimeout(timer); resolve(); },
        reject: (err) => { clearTimeout(timer); reject(err); },
      };
      // An append the broker has not taken in time is answered (503) and, if its send has not started, never sent.
      const timer = setTimeout(() => {
        if (pending.settled) return;
        pending.settled = true;
        reject(new Unavailable({ service: "kafka", message: `event log did not acknowledge within ${appendTimeoutMs} ms` }));
      }, appendTimeoutMs);
      queue.push(pending);
    });
  }

  return {
    append(events) {
      return send(events.keys.map((key, i) => {
        const r = recordAt(events, i);
        return { key, value: Buffer.from(r.buffer, r.byteOffset, r.byteLength) };
      }));
    },
    async consume(opts) {
      if (closed) throw new Error("event log is closed");
      const c = new KafkaConsumer(kafka, admin, topic, opts, logger, instance);
      await c.start();
      consumers.add(c);
      return {
        lag: () => c.lag(),
        stop: async () => { consumers.delete(c); await c.stop(); },
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.allSettled([...consumers].map((c) => c.stop()));
      consumers.clear();
      // Let queued appends finish (they were accepted before close).
      await Promise.race([queue.idle(), sleep(appendTimeoutMs)]);
      await producer.disconnect().catch(() => {});
      await admin.disconnect().catch(() => {});
    },
  };
}

/** How many partitions `topic` has; undefined when it does not exist. */
async function partitionCount(admin: Admin, topic: string): Promise<number | undefined> {
  if (!(await admin.listTopics()).includes(topic)) return undefined;
  const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
  return topics.find((t) => t.name === topic)?.partitions.length || undefined;
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

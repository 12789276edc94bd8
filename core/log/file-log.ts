/**
 * The embedded EventLog: an fsync'd, append-only, segmented file log standing in for Kafka in one process.
 *
 * Layout of `dir`:
 *   LOCK                          one process at a time (dir-lock.ts)
 *   <20-digit base offset>.log    segments: magic + framed JSON records (framing.ts); only the newest is written
 *   groups/<group>.offset         each consumer group's committed offset (offset-store.ts)
 *
 * Writes (file-log-writer.ts): append() frames its events at once, then joins a group commit (group-commit.ts):
 * one pwrite + fdatasync per round, and the appends of a round resolve only after its fdatasync, so an
 * acknowledged event survives kill -9 and power loss. Offsets are record sequence numbers: a segment's name is
 * the offset of its first record.
 *
 * Reads (file-log-consumer.ts, file-log-cursor.ts): each consumer reads the segments sequentially (never past
 * the durable end), hands batches to its handler, retries a failed handler with backoff (never skips), and
 * commits its offset durably afterwards: at-least-once delivery. This file ties them together: consumer groups
 * and their offsets, and retention (sealed segments every group has committed past are deleted).
 *
 * Recovery on open: the newest segment is scanned and a torn tail (a record half-written when the process died,
 * never acknowledged) is truncated; consumers resume from their committed offsets.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { Unavailable } from "../errors.js";
import type { EncodedEvents } from "../events/wire.js";
import { createLogger, type Logger } from "../logger.js";
import type { ConsumeOptions, EventLog, LogConsumer } from "../ports/event-log.js";
import { HANDLER_BACKOFF, type Backoff } from "./delivery.js";
import { lockDir, type DirLock } from "./dir-lock.js";
import { FileConsumer } from "./file-log-consumer.js";
import { SegmentWriter, type SegmentView } from "./file-log-writer.js";
import { fsyncDir } from "./fs-io.js";
import { openOffsetStore, type OffsetStore } from "./offset-store.js";
import { listSegments } from "./segments.js";

export interface FileLogOptions {
  /** A segment is sealed and a new one started once it reaches this size. Default 64 MiB. */
  readonly segmentBytes?: number;
  /** Appends are refused (Unavailable → 503) while more than this many bytes wait to be written. Default 256 MiB. */
  readonly maxPendingBytes?: number;
  /** First and maximum delay between retries of a failed consumer handler. Default core/log/delivery.ts HANDLER_BACKOFF. */
  readonly retryBaseMs?: number;
  readonly retryMaxMs?: number;
  readonly logger?: Logger;
}

export interface FileLog extends EventLog {
  readonly dir: string;
  /** Offset of the next record: the number of records ever durably appended. */
  endOffset(): number;
  /** Base offsets of the segments on disk (oldest first). */
  segments(): readonly number[];
}

const GROUP_NAME = /^[A-Za-z0-9._-]{1,100}$/;

export async function openFileLog(dir: string, options: FileLogOptions = {}): Promise<FileLog> {
  const root = path.resolve(dir);
  await fs.mkdir(path.join(root, "groups"), { recursive: true });
  const lock = await lockDir(root);
  try {
    return await FileLogImpl.open(root, lock, options);
  } catch (err) {
    await lock.release();
    throw err;
  }
}

class FileLogImpl implements FileLog {
  private closed = false;
  private readonly groups = new Map<string, OffsetStore>();
  private readonly consumers = new Map<string, FileConsumer>();
  /** While > 0 (a group is being registered) no segment is deleted. */
  private retentionHolds = 0;
  private writer!: SegmentWriter;

  private constructor(
    readonly dir: string,
    private readonly lock: DirLock,
    readonly logger: Logger,
    private readonly backoff: Backoff,
  ) {}

  static async open(dir: string, lock: DirLock, options: FileLogOptions): Promise<FileLogImpl> {
    const logger = (options.logger ?? createLogger()).child({ component: "file-log" });
    const backoff = { baseMs: options.retryBaseMs ?? HANDLER_BACKOFF.baseMs, maxMs: options.retryMaxMs ?? HANDLER_BACKOFF.maxMs };
    const log = new FileLogImpl(dir, lock, logger, backoff);
    const writerOptions = { segmentBytes: options.segmentBytes ?? 64 * 1024 * 1024, maxPendingBytes: options.maxPendingBytes ?? 256 * 1024 * 1024 };
    log.writer = await SegmentWriter.recover(dir, writerOptions, logger, () => log.wakeConsumers(), await listSegments(dir));
    await log.loadGroups();
    return log;
  }

  private async loadGroups(): Promise<void> {
    const first = this.writer.firstOffset();
    for (const name of await fs.readdir(path.join(this.dir, "groups"))) {
      if (!name.endsWith(".offset")) continue;
      const group = name.slice(0, -".offset".length);
      const store = await openOffsetStore(path.join(this.dir, "groups", name), first);
      const clamped = Math.min(Math.max(store.committed, first), this.writer.endOffset());
      if (clamped !== store.committed) {
        this.logger.warn("consumer group offset outside the log; clamped", { group, committed: store.committed, to: clamped });
        await store.commit(clamped);
      }
      this.groups.set(group, store);
    }
  }

  private wakeConsumers(): void {
    for (const c of this.consumers.values()) c.wake("data");
  }

  endOffset(): number {
    return this.writer.endOffset();
  }

  firstOffset(): number {
    return this.writer.firstOffset();
  }

  segments(): readonly number[] {
    return this.writer.segments();
  }

  segmentFor(offset: number): number {
    return this.writer.segmentFor(offset);
  }

  segmentView(base: number): SegmentView | undefined {
    return this.writer.segmentView(base);
  }

  append(events: EncodedEvents): Promise<void> {
    if (this.closed) return Promise.reject(new Unavailable({ service: "event-log", message: "the event log is closed" }));
    return this.writer.append(events);
  }

  async consume(options: ConsumeOptions): Promise<LogConsumer> {
    if (this.closed) throw new Unavailable({ service: "event-log", message: "the event log is closed" });
    const { group } = options;
    if (!GROUP_NAME.test(group)) throw new Error(`invalid consumer group name ${JSON.stringify(group)} (letters, digits, . _ -)`);
    if (this.consumers.has(group)) throw new Error(`consumer group ${group} already has a consumer in this process`);
    if (!(options.maxBatch >= 1)) throw new Error("maxBatch must be at least 1");
    let store = this.groups.get(group);
    if (store === undefined) {
      // A new group starts at the oldest record still on disk (like Kafka's auto.offset.reset=earliest); no
      // segment is deleted until it is registered, so that record is still there when it starts reading.
      this.retentionHolds++;
      try {
        store = await openOffsetStore(path.join(this.dir, "groups", `${group}.offset`), this.writer.firstOffset());
        await fsyncDir(path.join(this.dir, "groups"));
        this.groups.set(group, store);
      } finally {
        this.retentionHolds--;
      }
    }
    const consumer = new FileConsumer(this, store, options, this.backoff, () => this.consumers.delete(group));
    this.consumers.set(group, consumer);
    consumer.start();
    return consumer;
  }

  /** Called after a group commits: deletes sealed segments that every group has committed past. */
  async afterCommit(): Promise<void> {
    if (this.retentionHolds > 0) return;
    let min = Infinity;
    for (const s of this.groups.values()) min = Math.min(min, s.committed);
    await this.writer.deleteBelow(min);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.consumers.values()].map((c) => c.stop()));
    await this.writer.close();
    for (const s of this.groups.values()) await s.close().catch(() => {});
    await this.lock.release();
  }
}

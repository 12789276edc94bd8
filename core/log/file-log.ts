/**
 * The embedded EventLog: an fsync'd, append-only, segmented file log standing in for Kafka in one process.
 *
 * Layout of `dir`:
 *   LOCK                          one process at a time (dir-lock.ts)
 *   <20-digit base offset>.log    segments: magic + framed JSON records (framing.ts); only the newest is written
 *   groups/<group>.offset         each consumer group's committed offset (offset-store.ts)
 *
 * Writes: append() frames its events at once, then joins a queue. A single flush loop writes everything queued
 * with one pwrite + fdatasync (group commit) and resolves those appends only after the fdatasync, so an
 * acknowledged event survives kill -9 and power loss. Appends arriving during a flush share the next one.
 * Offsets are record sequence numbers: a segment's name is the offset of its first record.
 *
 * Reads: each consumer reads the segments sequentially (never past the durable end), hands batches to its
 * handler, retries a failed handler with backoff (never skips), and commits its offset durably afterwards:
 * at-least-once delivery. Sealed segments every group has committed past are deleted.
 * A reader learns where a segment ends only from the log's own bookkeeping (the durable size of the active
 * segment; the final size and next base of a sealed one), never from the file's size: while a group commit's
 * pwrite runs, fstat already reports a size part-way through it (even mid-record).
 *
 * Recovery on open: the newest segment is scanned and a torn tail (a record half-written when the process died,
 * never acknowledged) is truncated; consumers resume from their committed offsets.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { Unavailable } from "../errors.js";
import type { LoggedEvent } from "../events/schema.js";
import { createLogger, type Logger } from "../logger.js";
import type { ConsumeOptions, EventLog, LogConsumer } from "../ports/event-log.js";
import { lockDir, type DirLock } from "./dir-lock.js";
import { decodeRecord, type EncodedEvents } from "./encoded-batch.js";
import { encodeRecords, frameRecords, SEGMENT_MAGIC } from "./framing.js";
import { closeFd, fdatasync, fstatSize, fsyncDir, ftruncate, openFd, pread, pwriteAll } from "./fs-io.js";
import { openOffsetStore, type OffsetStore } from "./offset-store.js";
import { FrameReader, listSegments, scanSegment, segmentFile } from "./segments.js";

export interface FileLogOptions {
  /** A segment is sealed and a new one started once it reaches this size. Default 64 MiB. */
  readonly segmentBytes?: number;
  /** Appends are refused (Unavailable → 503) while more than this many bytes wait to be written. Default 256 MiB. */
  readonly maxPendingBytes?: number;
  /** First and maximum delay between retries of a failed consumer handler. Defaults 100 ms and 10 s. */
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

interface PendingAppend {
  readonly buf: Buffer;
  readonly count: number;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

/**
 * What a reader may read of one segment: bytes [MAGIC, limit) are durable, complete records. `next` is the base
 * of the following segment once this one is sealed (its records end exactly there), null while it is active.
 */
interface SegmentView {
  readonly limit: number;
  readonly next: number | null;
}

/** A sealed segment: its final byte size and the offset after its last record (the next segment's base). */
interface SealedSegment {
  readonly size: number;
  readonly end: number;
}

const GROUP_NAME = /^[A-Za-z0-9._-]{1,100}$/;
const MAGIC_BYTES = SEGMENT_MAGIC.length;

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
  private pending: PendingAppend[] = [];
  private pendingBytes = 0;
  private flushing: Promise<void> | null = null;
  private closed = false;
  /** Set when a write or fdatasync failed in a way that leaves the file state unknown; a restart recovers. */
  private broken: unknown = null;
  private readonly groups = new Map<string, OffsetStore>();
  private readonly consumers = new Map<string, Pick<FileConsumer<unknown>, "wake" | "stop">>();
  /** While > 0 (a group is being registered) no segment is deleted. */
  private retentionHolds = 0;
  readonly logger: Logger;

  private constructor(
    readonly dir: string,
    private readonly lock: DirLock,
    private readonly options: Required<Omit<FileLogOptions, "logger">>,
    logger: Logger,
    private segmentBases: number[],
    /** Every segment but the active one (immutable once sealed). */
    private readonly sealed: Map<number, SealedSegment>,
    private activeFd: number,
    private activeBase: number,
    private activeSize: number,
    private end: number,
  ) {
    this.logger = logger;
  }

  static async open(dir: string, lock: DirLock, options: FileLogOptions): Promise<FileLogImpl> {
    const logger = (options.logger ?? createLogger()).child({ component: "file-log" });
    const opts = {
      segmentBytes: options.segmentBytes ?? 64 * 1024 * 1024,
      maxPendingBytes: options.maxPendingBytes ?? 256 * 1024 * 1024,
      retryBaseMs: options.retryBaseMs ?? 100,
      retryMaxMs: options.retryMaxMs ?? 10_000,
    };
    let bases = await listSegments(dir);
    if (bases.length === 0) {
      await createSegment(dir, 0).then(closeFd);
      bases = [0];
    }
    const activeBase = bases[bases.length - 1]!;
    const fd = await openFd(segmentFile(dir, activeBase), "r+");
    let size = await fstatSize(fd);
    if (size < MAGIC_BYTES) {
      // Died while creating this segment: it holds nothing yet.
      await ftruncate(fd, 0);
      await pwriteAll(fd, SEGMENT_MAGIC, 0);
      await fdatasync(fd);
      size = MAGIC_BYTES;
    }
    await checkMagic(fd, segmentFile(dir, activeBase));
    const scan = await scanSegment(fd, MAGIC_BYTES, size);
    if (scan.problem !== undefined) {
      logger.warn("truncating the torn tail of the event log (records never acknowledged)", {
        segment: activeBase,
        at_byte: scan.validEnd,
        dropped_bytes: size - scan.validEnd,
        reason: scan.problem,
      });
      await ftruncate(fd, scan.validEnd);
      await fdatasync(fd);
    }
    // Older segments were fdatasync'd in full before their successor was created: their file size is final.
    const sealed = new Map<number, SealedSegment>();
    for (let i = 0; i + 1 < bases.length; i++) {
      sealed.set(bases[i]!, { size: (await fs.stat(segmentFile(dir, bases[i]!))).size, end: bases[i + 1]! });
    }
    const log = new FileLogImpl(dir, lock, opts, logger, bases, sealed, fd, activeBase, scan.validEnd, activeBase + scan.records);
    await log.loadGroups();
    return log;
  }

  private async loadGroups(): Promise<void> {
    for (const name of await fs.readdir(path.join(this.dir, "groups"))) {
      if (!name.endsWith(".offset")) continue;
      const group = name.slice(0, -".offset".length);
      const store = await openOffsetStore(path.join(this.dir, "groups", name), this.segmentBases[0]!);
      const clamped = Math.min(Math.max(store.committed, this.segmentBases[0]!), this.end);
      if (clamped !== store.committed) {
        this.logger.warn("consumer group offset outside the log; clamped", { group, committed: store.committed, to: clamped });
        await store.commit(clamped);
      }
      this.groups.set(group, store);
    }
  }

  endOffset(): number {
    return this.end;
  }

  segments(): readonly number[] {
    return this.segmentBases;
  }

  /**
   * What is durably readable of segment `base`, consistent with endOffset() at the same instant; undefined when
   * that segment is no longer on disk (deleted once every group had committed past it).
   */
  segmentView(base: number): SegmentView | undefined {
    if (base === this.activeBase) return { limit: this.activeSize, next: null };
    const s = this.sealed.get(base);
    return s === undefined ? undefined : { limit: s.size, next: s.end };
  }

  append(events: readonly LoggedEvent[]): Promise<void> {
    return this.enqueue(events.length, () => encodeRecords(events));
  }

  appendEncoded(events: EncodedEvents): Promise<void> {
    return this.enqueue(events.ends.length, () => frameRecords(events));
  }

  /** Queues `count` records, framed by `frame`, for the next group commit. */
  private enqueue(count: number, frame: () => Buffer): Promise<void> {
    if (this.closed) return Promise.reject(new Unavailable({ service: "event-log", message: "the event log is closed" }));
    if (this.broken !== null) return Promise.reject(this.brokenError());
    if (count === 0) return Promise.resolve();
    let buf: Buffer;
    try {
      buf = frame();
    } catch (err) {
      return Promise.reject(err); // e.g. a value JSON cannot encode: a caller bug, reported the async way
    }
    if (this.pendingBytes + buf.length > this.options.maxPendingBytes) {
      return Promise.reject(new Unavailable({ service: "event-log", message: "the event log write queue is full; retry shortly" }));
    }
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ buf, count, resolve, reject });
      this.pendingBytes += buf.length;
      this.flushing ??= this.flushLoop();
    });
  }

  private brokenError(): Unavailable {
    return new Unavailable({ service: "event-log", message: "the event log hit a disk error; restart to recover", cause: this.broken });
  }

  /** Group commit: drains the queue, one write + fdatasync per round, until nothing is pending. */
  private async flushLoop(): Promise<void> {
    try {
      while (this.pending.length > 0 && this.broken === null) {
        const batch = this.pending;
        this.pending = [];
        this.pendingBytes = 0;
        const buf = batch.length === 1 ? batch[0]!.buf : Buffer.concat(batch.map((p) => p.buf));
        let count = 0;
        for (const p of batch) count += p.count;
        try {
          await pwriteAll(this.activeFd, buf, this.activeSize);
        } catch (err) {
          // Nothing of this round is acknowledged. Cut any partial write so the next round starts on a frame.
          safeLog(this.logger, "error", "event log write failed", { err });
          for (const p of batch) p.reject(new Unavailable({ service: "event-log", message: "the event log could not write", cause: err }));
          await ftruncate(this.activeFd, this.activeSize).catch((e: unknown) => (this.broken = e));
          continue;
        }
        try {
          await fdatasync(this.activeFd);
        } catch (err) {
          // After a failed fsync the page cache state is unknown (a retry may falsely succeed): stop writing.
          this.broken = err;
          safeLog(this.logger, "error", "event log fdatasync failed; refusing further appends", { err });
          for (const p of batch) p.reject(this.brokenError());
          break;
        }
        this.activeSize += buf.length;
        this.end += count;
        for (const p of batch) p.resolve();
        for (const c of this.consumers.values()) c.wake("data");
        if (this.activeSize >= this.options.segmentBytes) {
          await this.rotate().catch((err: unknown) => {
            this.broken = err;
            safeLog(this.logger, "error", "event log segment rotation failed; refusing further appends", { err });
          });
        }
      }
      if (this.broken !== null) {
        for (const p of this.pending) p.reject(this.brokenError());
        this.pending = [];
        this.pendingBytes = 0;
      }
    } finally {
      this.flushing = null;
    }
  }

  /** Seals the active segment and starts a new one whose base is the next offset. */
  private async rotate(): Promise<void> {
    const base = this.end;
    const fd = await createSegment(this.dir, base);
    const old = this.activeFd;
    // One synchronous step: readers see the old segment either active or sealed with its final size, never between.
    this.sealed.set(this.activeBase, { size: this.activeSize, end: base });
    this.segmentBases.push(base);
    this.activeFd = fd;
    this.activeBase = base;
    this.activeSize = MAGIC_BYTES;
    await closeFd(old);
  }

  consume(options: ConsumeOptions): Promise<LogConsumer> {
    return this.subscribe(options, decodeRecord);
  }

  consumeEncoded(options: ConsumeOptions<Uint8Array>): Promise<LogConsumer> {
    return this.subscribe(options, copyBytes);
  }

  private async subscribe<T>(options: ConsumeOptions<T>, decode: (payload: Buffer) => T): Promise<LogConsumer> {
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
        store = await openOffsetStore(path.join(this.dir, "groups", `${group}.offset`), this.segmentBases[0]!);
        await fsyncDir(path.join(this.dir, "groups"));
        this.groups.set(group, store);
      } finally {
        this.retentionHolds--;
      }
    }
    const consumer = new FileConsumer(this, store, options, decode, this.options, () => this.consumers.delete(group));
    this.consumers.set(group, consumer);
    consumer.start();
    return consumer;
  }

  /** Called after a group commits: deletes sealed segments that every group has committed past. */
  async afterCommit(): Promise<void> {
    let min = Infinity;
    for (const s of this.groups.values()) min = Math.min(min, s.committed);
    while (this.retentionHolds === 0 && this.segmentBases.length > 1 && this.segmentBases[1]! <= min) {
      const base = this.segmentBases.shift()!;
      this.sealed.delete(base);
      await fs.rm(segmentFile(this.dir, base), { force: true }).catch((err: unknown) => {
        safeLog(this.logger, "warn", "could not delete a consumed log segment", { base, err });
      });
    }
  }

  /** The segment holding `offset` (the newest whose base ≤ offset). */
  segmentFor(offset: number): number {
    let found = this.segmentBases[0]!;
    for (const b of this.segmentBases) if (b <= offset) found = b;
    return found;
  }

  firstOffset(): number {
    return this.segmentBases[0]!;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.consumers.values()].map((c) => c.stop()));
    while (this.flushing) await this.flushing;
    for (const s of this.groups.values()) await s.close().catch(() => {});
    await closeFd(this.activeFd).catch(() => {});
    await this.lock.release();
  }
}

async function createSegment(dir: string, base: number): Promise<number> {
  const fd = await openFd(segmentFile(dir, base), "w+");
  await pwriteAll(fd, SEGMENT_MAGIC, 0);
  await fdatasync(fd);
  await fsyncDir(dir);
  return fd;
}

/** The reader's buffer is reused by its next read: an undecoded record must be copied out. */
const copyBytes = (payload: Buffer): Uint8Array => Uint8Array.prototype.slice.call(payload);

async function checkMagic(fd: number, file: string): Promise<void> {
  const head = Buffer.alloc(MAGIC_BYTES);
  await pread(fd, head, 0, MAGIC_BYTES, 0);
  if (!head.equals(SEGMENT_MAGIC)) throw new Error(`${file} is not a Runwatch log segment (bad magic)`);
}

/** Sequential reader of a consumer: the segment it is in and the offset of the next record to read. */
class LogCursor {
  private fd: number | null = null;
  private base = -1;
  private reader: FrameReader | null = null;

  constructor(
    private readonly log: FileLogImpl,
    /** Offset of the next record this cursor returns. */
    public offset: number,
    private readonly group: string,
  ) {}

  private async openAt(base: number): Promise<void> {
    await this.closeFile();
    this.fd = await openFd(segmentFile(this.log.dir, base), "r");
    this.base = base;
    this.reader = new FrameReader(this.fd, MAGIC_BYTES);
  }

  /** Positions the reader on the record at `offset`: opens the segment holding it and skips the ones before. */
  private async seek(offset: number): Promise<void> {
    const first = this.log.firstOffset();
    if (offset < first) throw new Error(`event log records ${offset}..${first - 1} were deleted before this group read them`);
    await this.openAt(this.log.segmentFor(offset));
    this.offset = this.base;
    while (this.offset < offset) await this.expectRecord();
  }

  /** Reads up to max records, never past the durable end, each decoded by `decode`. */
  async read<T>(max: number, decode: (payload: Buffer) => T): Promise<T[]> {
    if (this.reader === null) {
      const first = this.log.firstOffset();
      if (this.offset < first) {
        // Retention never deletes what a group has not committed, so this means files were removed by hand.
        safeLog(this.log.logger, "error", "event log records this group had not read are gone; continuing at the oldest one on disk", {
          group: this.group,
          from: this.offset,
          to: first,
        });
        this.offset = first;
      }
      await this.seek(this.offset);
    }
    const out: T[] = [];
    while (out.length < max && this.offset < this.log.endOffset()) {
      out.push(decode(await this.expectRecord()));
    }
    return out;
  }

  /** The record at `offset`; the caller has checked that offset < endOffset(), i.e. that it is durable. */
  private async expectRecord(): Promise<Buffer> {
    for (;;) {
      const view = this.log.segmentView(this.base);
      if (view === undefined) {
        // Our (finished) segment was deleted: every group, this one included, committed past it.
        await this.seek(this.offset);
        continue;
      }
      const r = await this.reader!.next(view.limit);
      if (r.kind === "record") {
        this.offset++;
        return r.payload;
      }
      if (r.kind === "end") {
        const now = this.log.segmentView(this.base);
        if (now === undefined || now.limit > this.reader!.pos) continue; // deleted, or more became durable meanwhile
        if (now.next === null) {
          throw new Error(`event log segment ${this.base} ends at byte ${this.reader!.pos} (offset ${this.offset}) below the durable end offset ${this.log.endOffset()}`);
        }
        if (this.offset !== now.next) {
          throw new Error(`event log segment ${this.base} holds records up to offset ${this.offset}, but the next segment starts at ${now.next}`);
        }
        await this.openAt(now.next);
        continue;
      }
      // Limits are always record boundaries of fdatasync'd data: anything else is damage on disk.
      const why = r.kind === "corrupt" ? r.reason : "the file is shorter than its durable size";
      throw new Error(`event log segment ${this.base} unreadable at byte ${this.reader!.pos}: ${why}`);
    }
  }

  private async closeFile(): Promise<void> {
    if (this.fd !== null) await closeFd(this.fd).catch(() => {});
    this.fd = null;
    this.reader = null;
  }

  /** Forgets the read position; the next read starts again at `offset`. */
  async reset(offset: number): Promise<void> {
    await this.closeFile();
    this.offset = offset;
  }

  close(): Promise<void> {
    return this.closeFile();
  }
}

/** Logs without ever throwing: a logger failing (e.g. on a value JSON cannot encode) must not stop a loop. */
function safeLog(logger: Logger, level: "warn" | "error", msg: string, fields: Record<string, unknown>): void {
  try {
    logger[level](msg, fields);
  } catch {
    try {
      const err = fields.err;
      logger[level](msg, { ...fields, err: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
    } catch {
      // Nothing left to report with.
    }
  }
}

class FileConsumer<T> implements LogConsumer {
  private stopping = false;
  private running: Promise<void> | null = null;
  private wakers = new Set<{ on: "data" | "stop"; wake: () => void }>();
  private readonly cursor: LogCursor;

  constructor(
    private readonly log: FileLogImpl,
    private readonly store: OffsetStore,
    private readonly options: ConsumeOptions<T>,
    private readonly decode: (payload: Buffer) => T,
    private readonly retry: { retryBaseMs: number; retryMaxMs: number },
    private readonly onStopped: () => void,
  ) {
    this.cursor = new LogCursor(log, store.committed, options.group);
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
        const delay = this.backoff(crashes);
        safeLog(this.log.logger, "error", "event log consumer loop crashed; restarting it", { group: this.options.group, retry_in_ms: delay, err });
        await this.cursor.reset(this.store.committed).catch(() => {});
        await this.sleep(delay, "stop");
      }
    }
  }

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

  private backoff(failures: number): number {
    return Math.min(this.retry.retryMaxMs, this.retry.retryBaseMs * 2 ** Math.min(failures, 20));
  }

  private available(): number {
    return this.log.endOffset() - this.cursor.offset;
  }

  /**
   * The consumer loop. It ends only through stop(): any error (an unreadable segment, a bug) is logged, the
   * read position goes back to the committed offset, and the loop carries on after a backoff. Nothing is skipped.
   */
  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      try {
        await this.step();
        failures = 0;
      } catch (err) {
        const delay = this.backoff(failures++);
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
    const batch = await this.cursor.read(maxBatch, this.decode);
    if (batch.length === 0) return;
    if (!(await this.deliver(batch))) {
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

  /** Hands the batch to the handler until it succeeds; false when stopped before it did. */
  private async deliver(batch: T[]): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.options.handler(batch);
        return true;
      } catch (err) {
        const delay = this.backoff(attempt);
        safeLog(this.log.logger, "warn", "event log handler failed; retrying the same batch", {
          group: this.options.group,
          attempt: attempt + 1,
          retry_in_ms: delay,
          batch_size: batch.length,
          first_offset: this.cursor.offset - batch.length,
          err,
        });
        if (this.stopping) return false;
        await this.sleep(delay, "stop");
        if (this.stopping) return false;
      }
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

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
import { encodeRecords, SEGMENT_MAGIC } from "./framing.js";
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

/** The durable end of the log: everything before (activeBase, activeSize) / endOffset is fsync'd. */
interface DurableEnd {
  readonly base: number;
  readonly size: number;
  readonly endOffset: number;
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
  private readonly consumers = new Map<string, FileConsumer>();
  readonly logger: Logger;

  private constructor(
    readonly dir: string,
    private readonly lock: DirLock,
    private readonly options: Required<Omit<FileLogOptions, "logger">>,
    logger: Logger,
    private segmentBases: number[],
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
    const log = new FileLogImpl(dir, lock, opts, logger, bases, fd, activeBase, scan.validEnd, activeBase + scan.records);
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

  durableEnd(): DurableEnd {
    return { base: this.activeBase, size: this.activeSize, endOffset: this.end };
  }

  append(events: readonly LoggedEvent[]): Promise<void> {
    if (this.closed) return Promise.reject(new Unavailable({ service: "event-log", message: "the event log is closed" }));
    if (this.broken !== null) return Promise.reject(this.brokenError());
    if (events.length === 0) return Promise.resolve();
    let buf: Buffer;
    try {
      buf = encodeRecords(events);
    } catch (err) {
      return Promise.reject(err); // e.g. a value JSON cannot encode: a caller bug, reported the async way
    }
    if (this.pendingBytes + buf.length > this.options.maxPendingBytes) {
      return Promise.reject(new Unavailable({ service: "event-log", message: "the event log write queue is full; retry shortly" }));
    }
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ buf, count: events.length, resolve, reject });
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
          this.logger.error("event log write failed", { err });
          for (const p of batch) p.reject(new Unavailable({ service: "event-log", message: "the event log could not write", cause: err }));
          await ftruncate(this.activeFd, this.activeSize).catch((e: unknown) => (this.broken = e));
          continue;
        }
        try {
          await fdatasync(this.activeFd);
        } catch (err) {
          // After a failed fsync the page cache state is unknown (a retry may falsely succeed): stop writing.
          this.broken = err;
          this.logger.error("event log fdatasync failed; refusing further appends", { err });
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
            this.logger.error("event log segment rotation failed; refusing further appends", { err });
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
    this.segmentBases.push(base);
    this.activeFd = fd;
    this.activeBase = base;
    this.activeSize = MAGIC_BYTES;
    await closeFd(old);
  }

  async consume(options: ConsumeOptions): Promise<LogConsumer> {
    if (this.closed) throw new Unavailable({ service: "event-log", message: "the event log is closed" });
    const { group } = options;
    if (!GROUP_NAME.test(group)) throw new Error(`invalid consumer group name ${JSON.stringify(group)} (letters, digits, . _ -)`);
    if (this.consumers.has(group)) throw new Error(`consumer group ${group} already has a consumer in this process`);
    if (!(options.maxBatch >= 1)) throw new Error("maxBatch must be at least 1");
    let store = this.groups.get(group);
    if (store === undefined) {
      // A new group starts at the oldest record still on disk (like Kafka's auto.offset.reset=earliest).
      store = await openOffsetStore(path.join(this.dir, "groups", `${group}.offset`), this.segmentBases[0]!);
      await fsyncDir(path.join(this.dir, "groups"));
      this.groups.set(group, store);
    }
    const consumer = new FileConsumer(this, store, options, this.options, () => this.consumers.delete(group));
    this.consumers.set(group, consumer);
    consumer.start();
    return consumer;
  }

  /** Called after a group commits: deletes sealed segments that every group has committed past. */
  async afterCommit(): Promise<void> {
    let min = Infinity;
    for (const s of this.groups.values()) min = Math.min(min, s.committed);
    while (this.segmentBases.length > 1 && this.segmentBases[1]! <= min) {
      const base = this.segmentBases.shift()!;
      await fs.rm(segmentFile(this.dir, base), { force: true }).catch((err: unknown) => {
        this.logger.warn("could not delete a consumed log segment", { base, err });
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

async function checkMagic(fd: number, file: string): Promise<void> {
  const head = Buffer.alloc(MAGIC_BYTES);
  await pread(fd, head, 0, MAGIC_BYTES, 0);
  if (!head.equals(SEGMENT_MAGIC)) throw new Error(`${file} is not a Runwatch log segment (bad magic)`);
}

/** Sequential reader of a consumer: the segment it is in and the offset of the next record to read. */
class LogCursor {
  private fd: number | null = null;
  private base = -1;
  private sealedSize = 0;
  private reader: FrameReader | null = null;

  constructor(
    private readonly log: FileLogImpl,
    /** Offset of the next record this cursor returns. */
    public offset: number,
  ) {}

  private async openAt(base: number): Promise<void> {
    await this.closeFile();
    const file = segmentFile(this.log.dir, base);
    this.fd = await openFd(file, "r");
    this.base = base;
    this.sealedSize = await fstatSize(this.fd);
    this.reader = new FrameReader(this.fd, MAGIC_BYTES);
  }

  /** Reads up to max records, never past the durable end. */
  async read(max: number): Promise<LoggedEvent[]> {
    const durable = this.log.durableEnd();
    if (this.reader === null) {
      const target = Math.max(this.offset, this.log.firstOffset());
      await this.openAt(this.log.segmentFor(target));
      this.offset = this.base;
      while (this.offset < target) await this.expectRecord(durable);
    }
    const out: LoggedEvent[] = [];
    while (out.length < max && this.offset < durable.endOffset) {
      out.push(JSON.parse((await this.expectRecord(durable)).toString("utf8")) as LoggedEvent);
    }
    return out;
  }

  private async expectRecord(durable: DurableEnd): Promise<Buffer> {
    for (;;) {
      const limit = this.base === durable.base ? durable.size : this.sealedSize;
      const r = await this.reader!.next(limit);
      if (r.kind === "record") {
        this.offset++;
        return r.payload;
      }
      if (r.kind === "end" && this.base !== durable.base) {
        // The segment may have been the active one when we opened it: take its final size once it is sealed.
        const size = await fstatSize(this.fd!);
        if (size > this.sealedSize) {
          this.sealedSize = size;
          continue;
        }
        // End of a sealed segment: the next one starts exactly at our offset.
        if (!this.log.segments().includes(this.offset)) throw new Error(`event log segment ${this.offset} is missing`);
        await this.openAt(this.offset);
        continue;
      }
      const why = r.kind === "corrupt" ? r.reason : r.kind;
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

class FileConsumer implements LogConsumer {
  private stopping = false;
  private running: Promise<void> | null = null;
  private wakers = new Set<{ on: "data" | "stop"; wake: () => void }>();
  private readonly cursor: LogCursor;

  constructor(
    private readonly log: FileLogImpl,
    private readonly store: OffsetStore,
    private readonly options: ConsumeOptions,
    private readonly retry: { retryBaseMs: number; retryMaxMs: number },
    private readonly onStopped: () => void,
  ) {
    this.cursor = new LogCursor(log, store.committed);
  }

  start(): void {
    this.running = this.run().catch((err: unknown) => {
      this.log.logger.error("event log consumer stopped by an unexpected error", { group: this.options.group, err });
    });
  }

  wake(reason: "data" | "stop"): void {
    for (const w of this.wakers) if (reason === "stop" || w.on === "data") w.wake();
  }

  /** Sleeps up to ms; new data (if on === "data") or stop() ends the sleep early. */
  private sleep(ms: number, on: "data" | "stop"): Promise<void> {
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

  private async run(): Promise<void> {
    const { maxBatch, maxWaitMs } = this.options;
    let readFailures = 0;
    try {
      while (!this.stopping) {
        if (this.available() <= 0) {
          await this.sleep(Infinity, "data");
          continue;
        }
        // Let a small batch fill for up to maxWaitMs (bigger batches mean cheaper storage writes).
        const deadline = Date.now() + maxWaitMs;
        while (!this.stopping && this.available() < maxBatch && Date.now() < deadline) {
          await this.sleep(deadline - Date.now(), "data");
        }
        if (this.stopping) break;
        let batch: LoggedEvent[];
        try {
          batch = await this.cursor.read(maxBatch);
          readFailures = 0;
        } catch (err) {
          // An unreadable segment is never skipped: report it loudly and retry from the committed offset.
          const delay = Math.min(this.retry.retryMaxMs, this.retry.retryBaseMs * 2 ** Math.min(readFailures++, 20));
          this.log.logger.error("event log read failed; retrying", { group: this.options.group, retry_in_ms: delay, err });
          await this.cursor.reset(this.store.committed);
          await this.sleep(delay, "stop");
          continue;
        }
        if (batch.length === 0) continue;
        if (!(await this.deliver(batch))) break;
        try {
          await this.store.commit(this.cursor.offset);
          await this.log.afterCommit();
        } catch (err) {
          // Not fatal: the next commit writes a later offset; a crash before it only redelivers (idempotent).
          this.log.logger.error("could not commit consumer offset", { group: this.options.group, err });
        }
      }
    } finally {
      await this.cursor.close();
    }
  }

  /** Hands the batch to the handler until it succeeds; false when stopped before it did. */
  private async deliver(batch: LoggedEvent[]): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.options.handler(batch);
        return true;
      } catch (err) {
        const delay = Math.min(this.retry.retryMaxMs, this.retry.retryBaseMs * 2 ** Math.min(attempt, 20));
        this.log.logger.warn("event log handler failed; retrying the same batch", {
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

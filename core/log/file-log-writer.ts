/**
 * The write side of the file log (file-log.ts): recovery of the newest segment on open, appends by group
 * commit (one pwrite + fdatasync per round, acknowledged only after the fdatasync), segment rotation, and the
 * bookkeeping readers use to know what is durable (segmentView), never the file's size: while a round's pwrite
 * runs, fstat already reports a size part-way through it (even mid-record).
 */
import fs from "node:fs/promises";
import { Unavailable } from "../errors.js";
import type { EncodedEvents } from "../events/wire.js";
import type { Logger } from "../logger.js";
import { frameRecords, SEGMENT_MAGIC, type FramedRecords } from "./framing.js";
import { closeFd, fdatasync, fstatSize, fsyncDir, ftruncate, openFd, pread, pwriteAll } from "./fs-io.js";
import { GroupCommit, type QueuedWrite } from "./group-commit.js";
import { safeLog } from "./safe-log.js";
import { scanSegment, segmentFile } from "./segments.js";

export const MAGIC_BYTES = SEGMENT_MAGIC.length;

/**
 * What a reader may read of one segment: bytes [MAGIC, limit) are durable, complete records. `next` is the base
 * of the following segment once this one is sealed (its records end exactly there), null while it is active.
 */
export interface SegmentView {
  readonly limit: number;
  readonly next: number | null;
}

/** A sealed segment: its final byte size and the offset after its last record (the next segment's base). */
interface SealedSegment {
  readonly size: number;
  readonly end: number;
}

interface PendingAppend extends QueuedWrite {
  readonly framed: FramedRecords;
  readonly count: number;
}

export interface WriterOptions {
  readonly segmentBytes: number;
  readonly maxPendingBytes: number;
}

export class SegmentWriter {
  private readonly queue = new GroupCommit<PendingAppend>((round) => this.writeRound(round));
  private closed = false;
  /** Set when a write or fdatasync failed in a way that leaves the file state unknown; a restart recovers. */
  private broken: unknown = null;

  private constructor(
    readonly dir: string,
    private readonly options: WriterOptions,
    private readonly logger: Logger,
    /** Called after each durable round (consumers wake up). */
    private readonly onDurable: () => void,
    private readonly segmentBases: number[],
    /** Every segment but the active one (immutable once sealed). */
    private readonly sealed: Map<number, SealedSegment>,
    private activeFd: number,
    private activeBase: number,
    private activeSize: number,
    private end: number,
  ) {}

  /** Opens the segments in `dir`: creates the first, or truncates the torn tail of the newest (never acknowledged). */
  static async recover(dir: string, options: WriterOptions, logger: Logger, onDurable: () => void, bases: number[]): Promise<SegmentWriter> {
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
      await pwriteAll(fd, [SEGMENT_MAGIC], 0);
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
    return new SegmentWriter(dir, options, logger, onDurable, bases, sealed, fd, activeBase, scan.validEnd, activeBase + scan.records);
  }

  /** Offset of the next record: the number of records ever durably appended. */
  endOffset(): number {
    return this.end;
  }

  firstOffset(): number {
    return this.segmentBases[0]!;
  }

  /** Base offsets of the segments on disk (oldest first). */
  segments(): readonly number[] {
    return this.segmentBases;
  }

  /** The segment holding `offset` (the newest whose base ≤ offset). */
  segmentFor(offset: number): number {
    let found = this.segmentBases[0]!;
    for (const b of this.segmentBases) if (b <= offset) found = b;
    return found;
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

  /** Queues the events for the next group commit; resolves once they are fdatasync'd. */
  append(events: EncodedEvents): Promise<void> {
    if (this.closed) return Promise.reject(new Unavailable({ service: "event-log", message: "the event log is closed" }));
    if (this.broken !== null) return Promise.reject(this.brokenError());
    const count = events.ends.length;
    if (count === 0) return Promise.resolve();
    let framed: FramedRecords;
    try {
      framed = frameRecords(events);
    } catch (err) {
      return Promise.reject(err); // e.g. a record over the size limit: a caller bug, reported the async way
    }
    if (this.queue.pendingBytes + framed.bytes > this.options.maxPendingBytes) {
      return Promise.reject(new Unavailable({ service: "event-log", message: "the event log write queue is full; retry shortly" }));
    }
    return new Promise<void>((resolve, reject) => this.queue.push({ framed, count, bytes: framed.bytes, settled: false, resolve, reject }));
  }

  /** Deletes sealed segments whose records all lie below `committed` (every group is past them). */
  async deleteBelow(committed: number): Promise<void> {
    while (this.segmentBases.length > 1 && this.segmentBases[1]! <= committed) {
      const base = this.segmentBases.shift()!;
      this.sealed.delete(base);
      await fs.rm(segmentFile(this.dir, base), { force: true }).catch((err: unknown) => {
        safeLog(this.logger, "warn", "could not delete a consumed log segment", { base, err });
      });
    }
  }

  /** Refuses new appends, waits for the queued ones, closes the active segment. */
  async close(): Promise<void> {
    this.closed = true;
    await this.queue.idle();
    await closeFd(this.activeFd).catch(() => {});
  }

  private brokenError(): Unavailable {
    return new Unavailable({ service: "event-log", message: "the event log hit a disk error; restart to recover", cause: this.broken });
  }

  /** One group-commit round: one write + fdatasync; throwing rejects every append of the round. */
  private async writeRound(round: readonly PendingAppend[]): Promise<void> {
    if (this.broken !== null) throw this.brokenError();
    // The round's records are written from where they are (the appends' own bytes), not joined into one buffer.
    const pieces = round.flatMap((p) => p.framed.pieces);
    let count = 0;
    let bytes = 0;
    for (const p of round) {
      count += p.count;
      bytes += p.framed.bytes;
    }
    try {
      await pwriteAll(this.activeFd, pieces, this.activeSize);
    } catch (err) {
      // Nothing of this round is acknowledged. Cut any partial write so the next round starts on a frame.
      safeLog(this.logger, "error", "event log write failed", { err });
      await ftruncate(this.activeFd, this.activeSize).catch((e: unknown) => (this.broken = e));
      throw new Unavailable({ service: "event-log", message: "the event log could not write", cause: err });
    }
    try {
      await fdatasync(this.activeFd);
    } catch (err) {
      // After a failed fsync the page cache state is unknown (a retry may falsely succeed): stop writing.
      this.broken = err;
      safeLog(this.logger, "error", "event log fdatasync failed; refusing further appends", { err });
      throw this.brokenError();
    }
    this.activeSize += bytes;
    this.end += count;
    this.onDurable();
    if (this.activeSize >= this.options.segmentBytes) {
      await this.rotate().catch((err: unknown) => {
        this.broken = err;
        safeLog(this.logger, "error", "event log segment rotation failed; refusing further appends", { err });
      });
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
}

async function createSegment(dir: string, base: number): Promise<number> {
  const fd = await openFd(segmentFile(dir, base), "w+");
  await pwriteAll(fd, [SEGMENT_MAGIC], 0);
  await fdatasync(fd);
  await fsyncDir(dir);
  return fd;
}

async function checkMagic(fd: number, file: string): Promise<void> {
  const head = Buffer.alloc(MAGIC_BYTES);
  await pread(fd, head, 0, MAGIC_BYTES, 0);
  if (!head.equals(SEGMENT_MAGIC)) throw new Error(`${file} is not a Runwatch log segment (bad magic)`);
}

/**
 * A file-log consumer's sequential reader: the segment it is in and the offset of the next record to read.
 * It reads only what the writer's bookkeeping says is durable (SegmentWriter.segmentView) and follows the
 * segments as they are sealed, rotated and, once every group is past them, deleted.
 */
import type { Logger } from "../logger.js";
import type { SegmentView } from "./file-log-writer.js";
import { MAGIC_BYTES } from "./file-log-writer.js";
import { closeFd, openFd } from "./fs-io.js";
import { safeLog } from "./safe-log.js";
import { FrameReader, segmentFile } from "./segments.js";

/** What the cursor needs to know of the log (SegmentWriter has it all). */
export interface SegmentSource {
  readonly dir: string;
  endOffset(): number;
  firstOffset(): number;
  segmentFor(offset: number): number;
  segmentView(base: number): SegmentView | undefined;
}

export class LogCursor {
  private fd: number | null = null;
  private base = -1;
  private reader: FrameReader | null = null;

  constructor(
    private readonly log: SegmentSource,
    private readonly logger: Logger,
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

  /**
   * Reads up to max records and, past the first, maxBytes bytes, never past the durable end. The bytes are copies
   * (the reader's buffer is reused).
   */
  async read(max: number, maxBytes = Infinity): Promise<Uint8Array[]> {
    if (this.reader === null) {
      const first = this.log.firstOffset();
      if (this.offset < first) {
        // Retention never deletes what a group has not committed, so this means files were removed by hand.
        safeLog(this.logger, "error", "event log records this group had not read are gone; continuing at the oldest one on disk", {
          group: this.group,
          from: this.offset,
          to: first,
        });
        this.offset = first;
      }
      await this.seek(this.offset);
    }
    const out: Uint8Array[] = [];
    let bytes = 0;
    while (out.length < max && bytes < maxBytes && this.offset < this.log.endOffset()) {
      const record = Uint8Array.prototype.slice.call(await this.expectRecord()) as Uint8Array;
      out.push(record);
      bytes += record.byteLength;
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

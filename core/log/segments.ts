/**
 * Segment files of the file log: `<20-digit base offset>.log`, where the base offset is the log offset of the
 * segment's first record. Only the newest segment is ever written; older ones are immutable until deleted.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { checkFrame, FRAME_HEADER_BYTES } from "./framing.js";
import { pread } from "./fs-io.js";

const NAME = /^(\d{20})\.log$/;
const CHUNK_BYTES = 1024 * 1024;

export const segmentFile = (dir: string, base: number): string => path.join(dir, `${String(base).padStart(20, "0")}.log`);

/** Base offsets of the segments in dir, ascending. */
export async function listSegments(dir: string): Promise<number[]> {
  const names = await fs.readdir(dir);
  return names
    .map((n) => NAME.exec(n)?.[1])
    .filter((b): b is string => b !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

export type FrameResult =
  | { readonly kind: "record"; readonly payload: Buffer }
  | { readonly kind: "end" }
  | { readonly kind: "incomplete" }
  | { readonly kind: "corrupt"; readonly reason: string };

/**
 * Sequential frame reader over one segment fd, buffered in 1 MiB chunks. `pos` is the file position of the
 * next frame; it advances past each record returned. A returned payload is valid until the next call.
 */
export class FrameReader {
  private buf = Buffer.allocUnsafe(CHUNK_BYTES);
  private bufFilePos = 0;
  private bufLen = 0;

  constructor(
    readonly fd: number,
    public pos: number,
  ) {
    this.bufFilePos = pos;
  }

  /** The frame at `pos`, reading no further than file position `limit`. */
  async next(limit: number): Promise<FrameResult> {
    if (this.pos >= limit) return { kind: "end" };
    for (;;) {
      const rel = this.pos - this.bufFilePos;
      const check = checkFrame(this.buf, rel, this.bufLen);
      if (check.kind === "record") {
        this.pos += check.payloadEnd - rel;
        return { kind: "record", payload: this.buf.subarray(check.payloadStart, check.payloadEnd) };
      }
      if (check.kind === "corrupt") return check;
      if (!(await this.fill(check.needBytes, limit))) return { kind: "incomplete" };
    }
  }

  /** Makes buf start at pos and read more of the file; false when nothing more is readable below limit. */
  private async fill(needBytes: number, limit: number): Promise<boolean> {
    let rel = this.pos - this.bufFilePos;
    if (rel < 0 || rel > this.bufLen) rel = this.bufLen = 0; // pos moved outside the buffer: start afresh
    const keep = this.bufLen - rel;
    const size = Math.max(CHUNK_BYTES, needBytes);
    if (size > this.buf.length) {
      const bigger = Buffer.allocUnsafe(size);
      this.buf.copy(bigger, 0, rel, this.bufLen);
      this.buf = bigger;
    } else if (rel > 0) {
      this.buf.copy(this.buf, 0, rel, this.bufLen);
    }
    this.bufFilePos = this.pos;
    this.bufLen = keep;
    const readFrom = this.bufFilePos + this.bufLen;
    const want = Math.min(this.buf.length - this.bufLen, limit - readFrom);
    if (want <= 0) return false;
    const n = await pread(this.fd, this.buf, this.bufLen, want, readFrom);
    this.bufLen += n;
    return n > 0;
  }
}

/**
 * Counts the valid records of a segment from `start` and finds where they end. Anything after `validEnd`
 * is a torn or corrupt tail (recovery truncates it).
 */
export async function scanSegment(
  fd: number,
  start: number,
  fileSize: number,
): Promise<{ records: number; validEnd: number; problem?: string }> {
  const reader = new FrameReader(fd, start);
  let records = 0;
  for (;;) {
    const r = await reader.next(fileSize);
    if (r.kind === "record") {
      records++;
      continue;
    }
    if (r.kind === "end") return { records, validEnd: reader.pos };
    const problem =
      r.kind === "corrupt" ? r.reason : `torn record (${fileSize - reader.pos} trailing bytes, header is ${FRAME_HEADER_BYTES})`;
    return { records, validEnd: reader.pos, problem };
  }
}

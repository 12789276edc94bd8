/**
 * On-disk record format of the embedded file log.
 *
 * A segment file starts with an 8-byte magic, then records framed as
 *   [u32 LE payload length][u32 LE CRC32 of payload][payload = UTF-8 JSON of one LoggedEvent]
 * The CRC lets recovery tell a torn (half-written) tail record from a complete one; length 0 never occurs,
 * so a zero-filled tail (a file extended but not written before a crash) is detected as torn too.
 */
import { crc32 } from "node:zlib";
import { recordAt, type EncodedBatch } from "../events/wire.js";

export const SEGMENT_MAGIC = Buffer.from("RWLOG01\n", "latin1");
export const FRAME_HEADER_BYTES = 8;
/** Sanity bound on one record; ingest bodies are ≤ 1 MiB, so a larger length means a corrupt header. */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;

/** Frames many records into one buffer, so a group commit is a single write(). */
export function encodeRecords(records: readonly unknown[]): Buffer {
  const jsons = records.map((r) => JSON.stringify(r));
  const lengths = jsons.map((j) => Buffer.byteLength(j, "utf8"));
  let total = 0;
  for (const n of lengths) total += FRAME_HEADER_BYTES + n;
  const buf = Buffer.allocUnsafe(total);
  let pos = 0;
  for (let i = 0; i < jsons.length; i++) {
    const len = lengths[i]!;
    const start = pos + FRAME_HEADER_BYTES;
    buf.write(jsons[i]!, start, len, "utf8");
    buf.writeUInt32LE(len, pos);
    buf.writeUInt32LE(crc32(buf.subarray(start, start + len)), pos + 4);
    pos = start + len;
  }
  return buf;
}

/**
 * Frames records that are already bytes (one JSON LoggedEvent each) as the pieces of one vectored write: each
 * record's header, then the record itself, a view of the batch rather than a copy. A framed copy of each
 * acknowledged export (~300 KB) was a new buffer on the thread that serves ingest, and V8 runs a full mark-compact
 * there for about every 64 MB of such buffers (core/threads/shared-arena.ts).
 */
export function frameRecords(batch: EncodedBatch<ArrayBufferLike>): FramedRecords {
  const n = batch.ends.length;
  const headers = Buffer.allocUnsafe(n * FRAME_HEADER_BYTES); // small: from Node's pool for up to 512 records
  const pieces: Uint8Array[] = [];
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const record = recordAt(batch, i);
    const at = i * FRAME_HEADER_BYTES;
    headers.writeUInt32LE(record.byteLength, at);
    headers.writeUInt32LE(crc32(record), at + 4);
    pieces.push(headers.subarray(at, at + FRAME_HEADER_BYTES), record);
    bytes += FRAME_HEADER_BYTES + record.byteLength;
  }
  return { pieces, bytes };
}

/** Framed records as the pieces of one write, in order, and their total length. */
export interface FramedRecords {
  readonly pieces: readonly Uint8Array[];
  readonly bytes: number;
}

export type FrameCheck =
  | { readonly kind: "record"; readonly payloadStart: number; readonly payloadEnd: number }
  /** Fewer bytes than a full frame: more may follow (reader) or the tail is torn (recovery). */
  | { readonly kind: "incomplete"; readonly needBytes: number }
  | { readonly kind: "corrupt"; readonly reason: string };

/** Checks the frame that starts at `pos` in buf[0, end). */
export function checkFrame(buf: Buffer, pos: number, end: number): FrameCheck {
  if (end - pos < FRAME_HEADER_BYTES) return { kind: "incomplete", needBytes: FRAME_HEADER_BYTES };
  const len = buf.readUInt32LE(pos);
  if (len === 0 || len > MAX_RECORD_BYTES) return { kind: "corrupt", reason: `bad record length ${len}` };
  const payloadStart = pos + FRAME_HEADER_BYTES;
  const payloadEnd = payloadStart + len;
  if (payloadEnd > end) return { kind: "incomplete", needBytes: FRAME_HEADER_BYTES + len };
  if (crc32(buf.subarray(payloadStart, payloadEnd)) !== buf.readUInt32LE(pos + 4)) {
    return { kind: "corrupt", reason: "checksum mismatch" };
  }
  return { kind: "record", payloadStart, payloadEnd };
}

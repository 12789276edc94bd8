/**
 * The wire form of events: JSON bytes, the form in which events are appended to and read from the event log
 * (EventLog) and in which batches cross between threads: the records (one LoggedEvent each)
 * joined into one JSON array in a buffer of its own (transferred, not copied) or in a view the sender lent from its
 * shared arena (core/threads/shared-arena.ts), with the byte offset where each record ends.
 * - Ingest (web/ingest/decode-thread.ts) validates a batch on another thread and hands the log its events in
 *   this form (EventLog.append, with each record's log key).
 * - The pipeline thread receives the records the log holds in this form and decodes the array with one
 *   JSON.parse; should that fail (a record that is not a Runwatch event, possible on a shared Kafka topic), it
 *   decodes record by record and skips the ones that are not JSON, as the in-thread Kafka consumer does.
 */
import { runKeyOfEvent } from "./run-key.js";
import type { LoggedEvent } from "./schema.js";

/** A batch in a buffer of its own by default; `EncodedBatch<ArrayBufferLike>` may also be a lent view of shared memory. */
export interface EncodedBatch<B extends ArrayBufferLike = ArrayBuffer> {
  /** `[r0,r1,…]`: record i spans bytes [start(i), ends[i]) with start(0) = 1 and start(i) = ends[i-1] + 1. */
  readonly data: Uint8Array<B>;
  readonly ends: Uint32Array<ArrayBuffer>;
}

const OPEN = 0x5b; // [
const COMMA = 0x2c;
const CLOSE = 0x5d; // ]

/** The records as one batch, written into `into(length)` when it gives room (a lent view), else a buffer of its own. */
export function encodeBatch(records: readonly Uint8Array[]): EncodedBatch;
export function encodeBatch(records: readonly Uint8Array[], into: (length: number) => Uint8Array | undefined): EncodedBatch<ArrayBufferLike>;
export function encodeBatch(records: readonly Uint8Array[], into?: (length: number) => Uint8Array | undefined): EncodedBatch<ArrayBufferLike> {
  let total = 1 + Math.max(1, records.length);
  for (const r of records) total += r.byteLength;
  const data = into?.(total) ?? new Uint8Array(total);
  const ends = new Uint32Array(records.length);
  data[0] = OPEN;
  let pos = 1;
  for (let i = 0; i < records.length; i++) {
    if (i > 0) data[pos++] = COMMA;
    data.set(records[i]!, pos);
    pos += records[i]!.byteLength;
    ends[i] = pos;
  }
  data[pos] = CLOSE;
  return { data, ends };
}

/**
 * One record of ASCII text, given in parts, as a batch, written once into a buffer of its own. An OTLP export record
 * is ~300 KB of base64; joining its parts, encoding the text and framing the record copied it three times, a good share
 * of an export's acknowledgement (docs/BENCHMARKS.md, "Ingest's work per body"). Every part must be ASCII (it is
 * written one byte per character).
 */
export function encodeAsciiRecord(parts: readonly string[]): EncodedBatch {
  let length = 0;
  for (const p of parts) length += p.length;
  const data = new Uint8Array(length + 2);
  const out = Buffer.from(data.buffer);
  data[0] = OPEN;
  let pos = 1;
  for (const p of parts) pos += out.write(p, pos, "latin1");
  data[pos] = CLOSE;
  return { data, ends: Uint32Array.of(pos) };
}

/** Encoded events with the log key of each (its run key: core/events/run-key.ts), for EventLog.append. */
export interface EncodedEvents extends EncodedBatch {
  readonly keys: readonly string[];
}

const utf8 = new TextEncoder();

/**
 * Encodes events (JSON.stringify of each), each record's UTF-8 written in place: one pass over the text instead of
 * a byte count per record, a joined copy and its encoding (docs/BENCHMARKS.md, "Ingest's work per body").
 */
export function encodeEvents(events: readonly LoggedEvent[]): EncodedEvents {
  const jsons = events.map((e) => JSON.stringify(e));
  let chars = 2 + jsons.length;
  for (const j of jsons) chars += j.length;
  // Mostly ASCII: a tenth more than one byte per character; text past that grows the buffer.
  let data = new Uint8Array(Math.ceil(chars * 1.1) + 64);
  const ends = new Uint32Array(jsons.length);
  data[0] = OPEN;
  let pos = 1;
  for (let i = 0; i < jsons.length; i++) {
    if (i > 0) data[pos++] = COMMA;
    const json = jsons[i]!;
    let wrote = utf8.encodeInto(json, data.subarray(pos));
    if (wrote.read < json.length) {
      const bigger = new Uint8Array(2 * data.length + 3 * json.length); // UTF-8 takes at most 3 bytes per UTF-16 unit
      bigger.set(data.subarray(0, pos));
      data = bigger;
      wrote = utf8.encodeInto(json, data.subarray(pos));
    }
    pos += wrote.written;
    ends[i] = pos;
  }
  data[pos++] = CLOSE;
  return { data: data.slice(0, pos), ends, keys: events.map(runKeyOfEvent) };
}

/** One record (the UTF-8 JSON of a LoggedEvent) decoded; throws on bytes that are not JSON. */
export const decodeRecord = (bytes: Uint8Array): LoggedEvent =>
  JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8")) as LoggedEvent;

/** The bytes of record i (a view into batch.data). */
export function recordAt(batch: EncodedBatch<ArrayBufferLike>, i: number): Uint8Array {
  const start = i === 0 ? 1 : batch.ends[i - 1]! + 1;
  return batch.data.subarray(start, batch.ends[i]!);
}

export function decodeBatch(batch: EncodedBatch<ArrayBufferLike>, onUndecodable: (index: number, err: unknown) => void): LoggedEvent[] {
  try {
    return JSON.parse(Buffer.from(batch.data.buffer, batch.data.byteOffset, batch.data.byteLength).toString("utf8")) as LoggedEvent[];
  } catch {
    const out: LoggedEvent[] = [];
    for (let i = 0; i < batch.ends.length; i++) {
      try {
        out.push(decodeRecord(recordAt(batch, i)));
      } catch (err) {
        onUndecodable(i, err);
      }
    }
    return out;
  }
}

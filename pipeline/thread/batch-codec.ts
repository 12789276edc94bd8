/**
 * How a batch of log records crosses from the host thread to the pipeline thread: the records' JSON bytes,
 * untouched, joined into one JSON array in a buffer of its own (transferred, not copied) with the byte offset
 * where each record ends. The pipeline thread decodes the array with one JSON.parse; should that fail (a
 * record that is not a Runwatch event, possible on a shared Kafka topic), it decodes record by record and
 * skips the ones that are not JSON, as the in-thread Kafka consumer does.
 */
import type { LoggedEvent } from "../../core/events/schema.js";

export interface EncodedBatch {
  /** `[r0,r1,…]`: record i spans bytes [start(i), ends[i]) with start(0) = 1 and start(i) = ends[i-1] + 1. */
  readonly data: Uint8Array<ArrayBuffer>;
  readonly ends: Uint32Array<ArrayBuffer>;
}

const OPEN = 0x5b; // [
const COMMA = 0x2c;
const CLOSE = 0x5d; // ]

export function encodeBatch(records: readonly Uint8Array[]): EncodedBatch {
  let total = 1 + Math.max(1, records.length);
  for (const r of records) total += r.byteLength;
  const data = new Uint8Array(total);
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

export function decodeBatch(batch: EncodedBatch, onUndecodable: (index: number, err: unknown) => void): LoggedEvent[] {
  const bytes = Buffer.from(batch.data.buffer, batch.data.byteOffset, batch.data.byteLength);
  try {
    return JSON.parse(bytes.toString("utf8")) as LoggedEvent[];
  } catch {
    const out: LoggedEvent[] = [];
    for (let i = 0; i < batch.ends.length; i++) {
      const start = i === 0 ? 1 : batch.ends[i - 1]! + 1;
      try {
        out.push(JSON.parse(bytes.toString("utf8", start, batch.ends[i]!)) as LoggedEvent);
      } catch (err) {
        onUndecodable(i, err);
      }
    }
    return out;
  }
}

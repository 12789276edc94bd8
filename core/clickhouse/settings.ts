import { TimeSlice } from "../time-slice.js";

/**
 * Session settings both ClickHouse transports apply, so the shared SQL in event-store.ts sees the same
 * wire format whichever adapter runs it.
 */
export const CLICKHOUSE_SETTINGS = {
  /** DateTime/DateTime64 come back as ISO 8601 with a Z (2026-11-23T10:00:00.123Z), like the rest of the app. */
  date_time_output_format: "iso",
  /** Inserted timestamps may be ISO 8601 with offsets. */
  date_time_input_format: "best_effort",
  /** UInt64/Int64 come back as JSON strings on both transports (the port's documented behaviour). */
  output_format_json_quote_64bit_integers: 1,
  /**
   * A JSON object given for a String column is stored as its text: agent_events rows carry the payload as the object
   * it is (event-store.ts eventRowLine), not as a string escaped a second time. ClickHouse 22.12 added the setting
   * and 23.1 turned it on by default; it is set here so that a server configured otherwise still reads the rows.
   */
  input_format_json_read_objects_as_strings: 1,
} as const;

/** Quotes an identifier (database or table name) for DDL. */
export function quoteIdent(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`invalid ClickHouse identifier: ${JSON.stringify(name)}`);
  return `\`${name}\``;
}

/**
 * The bytes of one text line per item, made in time slices (a pipeline part holds thousands of rows and may share
 * the event loop with ingest) and encoded 64 lines at a time. The rows' text is never whole on the heap: each
 * chunk's string dies as soon as it is encoded, so the young generation's scavenges do not copy it while the
 * insert is awaited, and no multi-megabyte string lands in the large-object space (session 17).
 */
export async function encodeLinesInSlices<T>(items: readonly T[], line: (item: T) => string, slice = new TimeSlice()): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let text = "";
  for (let i = 0; i < items.length; i++) {
    text += line(items[i]!);
    if ((i & 63) === 63) {
      chunks.push(Buffer.from(text));
      text = "";
      if (slice.due()) await slice.next();
    }
  }
  if (text !== "") chunks.push(Buffer.from(text));
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/** One row's JSONEachRow line: the row as one JSON object, then a newline. */
export const jsonEachRowLine = (row: Record<string, unknown>): string => JSON.stringify(row) + "\n";

/** JSONEachRow text of rows, one JSON object per line. */
export function toJsonEachRow(rows: readonly Record<string, unknown>[]): string {
  let out = "";
  for (const r of rows) out += jsonEachRowLine(r);
  return out;
}

/** Decodes a JSONEachRow response body. */
export function parseJsonEachRow<T>(text: string): T[] {
  const out: T[] = [];
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    if (end > start) out.push(JSON.parse(text.slice(start, end)) as T);
    start = end + 1;
  }
  return out;
}

import type { EncodedRows, SandboxAnswer } from "../ports/clickhouse.js";
import { jsonValue } from "../json-text.js";
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
  /** Inserts are JSONCompactEachRow (EncodedRows, core/ports/clickhouse.ts): a null in a column that is not Nullable is its default. */
  input_format_null_as_default: 1,
  /**
   * Parse an insert on the thread that runs it. The parallel parser splits the input among a pool of threads, which
   * costs more CPU than it saves for the pipeline's inserts (a few MB each): docs/BENCHMARKS.md, "ClickHouse calls".
   */
  input_format_parallel_parsing: 0,
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
 * insert is awaited, and no multi-megabyte string lands in the large-object space.
 */
export async function encodeLinesInSlices<T>(items: readonly T[], line: (item: T) => string, slice = new TimeSlice()): Promise<Buffer> {
  const chunks = new LineChunks();
  for (const item of items) if (chunks.add(line(item)) && slice.due()) await slice.next();
  return chunks.bytes();
}

/**
 * encodeLinesInSlices at once, for rows that must be taken before the caller's first wait (rows of records that
 * another part may change as soon as the caller returns its promise).
 */
export function encodeLines<T>(items: readonly T[], line: (item: T) => string): Buffer {
  const chunks = new LineChunks();
  for (const item of items) chunks.add(line(item));
  return chunks.bytes();
}

/** Lines joined and encoded 64 at a time, so that no text of more than 64 lines is ever whole. */
class LineChunks {
  private readonly chunks: Buffer[] = [];
  private text = "";
  private lines = 0;

  /** Adds a line; true when that encoded a chunk (a point at which to give the event loop a turn). */
  add(line: string): boolean {
    this.text += line;
    if ((++this.lines & 63) !== 0) return false;
    this.chunks.push(Buffer.from(this.text));
    this.text = "";
    return true;
  }

  bytes(): Buffer {
    if (this.text !== "") this.chunks.push(Buffer.from(this.text));
    this.text = "";
    return this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
  }
}

/** The columns of rows given as objects: every key any of them has, in the order first seen. */
export function columnsOf(rows: readonly Record<string, unknown>[]): string[] {
  const columns = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r)) columns.add(k);
  return [...columns];
}

/**
 * One row's JSONCompactEachRow line: its values in the order of `columns` (a key it lacks is null), then a newline.
 * Written value by value (core/json-text.ts): the same text as JSON.stringify of the values' array, sooner for a
 * run's or an LLM call's row (docs/BENCHMARKS.md, "Pipeline thread, per span").
 */
export function compactRowLine(row: Record<string, unknown>, columns: readonly string[]): string {
  let line = "[";
  for (let i = 0; i < columns.length; i++) line += (i === 0 ? "" : ",") + jsonValue(row[columns[i]!]);
  return `${line}]\n`;
}

/** Rows given as objects, encoded for an insert (in time slices, like encodeLinesInSlices). */
export async function encodeRows(rows: readonly Record<string, unknown>[], slice?: TimeSlice): Promise<EncodedRows> {
  const columns = columnsOf(rows);
  return { columns, bytes: await encodeLinesInSlices(rows, (r) => compactRowLine(r, columns), slice) };
}

/**
 * The rows of a JSONEachRow answer, given as text or as UTF-8 bytes (chDB's answer, not decoded whole: a newline byte
 * is never part of a multi-byte character, so each line decodes on its own).
 */
function* jsonEachRow<T>(body: string | Buffer): Generator<T> {
  let start = 0;
  while (start < body.length) {
    let end = typeof body === "string" ? body.indexOf("\n", start) : body.indexOf(0x0a, start);
    if (end === -1) end = body.length;
    if (end > start) yield JSON.parse(typeof body === "string" ? body.slice(start, end) : body.toString("utf8", start, end)) as T;
    start = end + 1;
  }
}

/**
 * parseJsonEachRow in time slices, for a big answer (a run's tens of thousands of events): decoded and parsed at once,
 * 50 MB of rows held the event loop — every other tenant's request — for hundreds of milliseconds.
 */
export async function parseJsonEachRowInSlices<T>(body: string | Uint8Array, slice = new TimeSlice()): Promise<T[]> {
  const out: T[] = [];
  for (const row of jsonEachRow<T>(typeof body === "string" ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength))) {
    out.push(row);
    if ((out.length & 63) === 0 && slice.due()) await slice.next();
  }
  return out;
}

/** Answers of more bytes than this are parsed in time slices. */
export const SLICED_PARSE_BYTES = 256 * 1024;

/** Decodes a JSONEachRow response body. */
export function parseJsonEachRow<T>(text: string): T[] {
  return [...jsonEachRow<T>(text)];
}

/**
 * A JSONCompact answer: `{meta: [{name, type}], data: [[…]], …}`. After a query that failed while it wrote its answer,
 * chDB (26.7; chdb-http too) puts what that one had written in front of the next query's answer on the same session; the answer is
 * therefore the last document of the text (a value's line breaks are escaped in JSON, so the opening line and tab
 * of a document can be part of no value).
 */
export function fromJsonCompact(text: string): SandboxAnswer {
  if (text.trim() === "") return { columns: [], rows: [] };
  const start = Math.max(0, text.lastIndexOf('{\n\t"meta"'));
  const body = JSON.parse(text.slice(start)) as { meta: { name: string; type: string }[]; data: unknown[][] };
  return { columns: body.meta.map((m) => ({ name: m.name, type: m.type })), rows: body.data };
}

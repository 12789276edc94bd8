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

/** JSONEachRow text of rows, one JSON object per line. */
export function toJsonEachRow(rows: readonly Record<string, unknown>[]): string {
  let out = "";
  for (const r of rows) out += JSON.stringify(r) + "\n";
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

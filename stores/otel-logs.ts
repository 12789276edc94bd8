/**
 * OpenTelemetry log records (core/clickhouse/migrations/200_otel_logs.sql): written by the pipeline from log export
 * records (otlp/logs-mapping.ts), read by a span's panel (by trace and span id), a run's logs (by trace id) and the
 * project's log search. Every read is scoped by project: a trace id another project also sent never crosses over.
 * Rows are deduplicated by log id on read (an export record read twice writes its rows twice until they merge).
 */
import type { ClickHouse } from "../core/ports/clickhouse.js";
import { decodeTimeIdCursor, timeIdCursor } from "./time-id-cursor.js";

export interface LogRow {
  readonly project_id: number;
  readonly user_id: number;
  readonly log_id: string;
  readonly trace_id: string;
  readonly span_id: string;
  /** ClickHouse time text (toChTime), to the millisecond. */
  readonly time: string;
  /**
   * The nanoseconds within that millisecond, then (after the export's receive time) the record's place in its export:
   * the order of a millisecond's records (migration 270).
   */
  readonly time_sub_ns: number;
  readonly seq: number;
  readonly severity_number: number;
  readonly severity_text: string;
  readonly event_name: string;
  /** Text as sent, or the JSON of a structured body. */
  readonly body: string;
  /** JSON object of the record's attributes. */
  readonly attributes: string;
  readonly service_name: string;
  readonly scope: string;
  readonly received_at: string;
}

/** A log record as the API answers it. */
export interface LogLine {
  readonly log_id: string;
  readonly time: string;
  readonly trace_id: string | null;
  readonly span_id: string | null;
  readonly severity_number: number;
  readonly severity_text: string;
  readonly event_name: string | null;
  readonly body: unknown;
  readonly attributes: Record<string, unknown>;
  readonly service_name: string;
  readonly scope: string;
}

export interface LogPage { readonly logs: LogLine[]; readonly next_cursor: string | null }

export const insertLogRows = (ch: ClickHouse, rows: readonly LogRow[]): Promise<void> =>
  rows.length === 0 ? Promise.resolve() : ch.insert("otel_logs", rows as unknown as Record<string, unknown>[]);

const COLUMNS = `toString(log_id) AS log_id, trace_id, span_id, toUnixTimestamp64Milli(time) AS time_ms, severity_number, severity_text, event_name, body, attributes, service_name, scope`;
type Selected = Omit<LogRow, "project_id" | "user_id" | "received_at" | "time" | "time_sub_ns" | "seq"> & { readonly time_ms: string | number };

/** A stored JSON text back as a value (a plain-text body stays text). */
function parsedBody(text: string): unknown {
  const c = text.charCodeAt(0);
  if (c !== 0x7b && c !== 0x5b) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
function parsedAttributes(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const lineOf = (r: Selected): LogLine => ({
  log_id: r.log_id,
  time: new Date(Number(r.time_ms)).toISOString(),
  trace_id: r.trace_id || null,
  span_id: r.span_id || null,
  severity_number: Number(r.severity_number),
  severity_text: r.severity_text,
  event_name: r.event_name || null,
  body: parsedBody(r.body),
  attributes: parsedAttributes(r.attributes),
  service_name: r.service_name,
  scope: r.scope,
});

const cursorOf = (l: LogLine): string => timeIdCursor(l.time, l.log_id);

/** A span's log records (its events sent as logs), oldest first, at most `limit`. */
export async function spanLogs(ch: ClickHouse, projectId: number, traceId: string, spanId: string, limit: number): Promise<LogLine[]> {
  const rows = await ch.query<Selected>(
    `SELECT ${COLUMNS} FROM otel_logs
     WHERE project_id = {project:UInt64} AND trace_id = {trace:String} AND span_id = {span:String}
     ORDER BY time, time_sub_ns, received_at, seq, log_id LIMIT 1 BY log_id LIMIT {limit:UInt32}`,
    { project: projectId, trace: traceId, span: spanId, limit },
  );
  return rows.map(lineOf);
}

export interface LogQuery {
  readonly limit: number;
  readonly cursor?: string;
  /** Only records whose body or event name holds this text (case-insensitively). */
  readonly q?: string;
  /** Only the records of this trace (a run's logs), oldest first; otherwise the project's, newest first. */
  readonly traceId?: string;
}

/** A page of log records: a run's (by trace id, oldest first) or the project's (newest first), with a text filter. */
export async function listLogs(ch: ClickHouse, projectId: number, query: LogQuery): Promise<LogPage> {
  const [at, id] = query.cursor ? decodeTimeIdCursor(query.cursor) : [undefined, undefined];
  const newest = query.traceId === undefined;
  const order = newest ? "DESC" : "ASC";
  const rows = await ch.query<Selected>(
    `SELECT ${COLUMNS} FROM otel_logs
     WHERE project_id = {project:UInt64}
       ${query.traceId !== undefined ? "AND trace_id = {trace:String}" : ""}
       ${query.q !== undefined ? "AND (positionCaseInsensitiveUTF8(body, {q:String}) > 0 OR positionCaseInsensitiveUTF8(event_name, {q:String}) > 0)" : ""}
       ${at ? `AND (time, toString(log_id)) ${newest ? "<" : ">"} ({at:DateTime64(3, 'UTC')}, {id:String})` : ""}
     ORDER BY time ${order}, toString(log_id) ${order} LIMIT 1 BY log_id LIMIT {limit:UInt32}`,
    { project: projectId, limit: query.limit + 1, ...(query.traceId !== undefined ? { trace: query.traceId } : {}), ...(query.q !== undefined ? { q: query.q } : {}), ...(at ? { at, id } : {}) },
  );
  const logs = rows.slice(0, query.limit).map(lineOf);
  return { logs, next_cursor: rows.length > query.limit ? cursorOf(logs[logs.length - 1]!) : null };
}

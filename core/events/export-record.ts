/**
 * The event-log record of an OTLP export logged whole (docs/OTEL.md): a receiver appends the export as it came, the
 * pipeline maps it into events (otlp/export-record.ts expandExportRecord). Like an event record it is JSON, so a
 * batch of mixed records still decodes with one JSON.parse:
 *   {"otlp_export":1,"project_id":9,"user_id":7,"received_at_ms":1764000000000,"format":"protobuf","body":"<base64>"}
 * `body` is the export as the client sent it, decompressed. A log export (ExportLogsServiceRequest) says
 * `"signal":"logs"`; a trace export says nothing (every record before logs were taken is one). The format lives here, beside the event records'
 * (wire.ts), because more than the OTLP code reads it: replaying a dead letter puts such a record back in the log.
 *
 * A record written before projects existed has no project_id: it is its user's personal project (same id).
 *
 * Log key: one per project (`otlp:<project id>`), not per run: an export holds many traces, and a trace's spans
 * arrive in several exports, so with a key per project every export of a trace reaches the same consumer, in order.
 */
import { encodeAsciiRecord, type EncodedEvents } from "./wire.js";
import { namesProject, type Sender } from "./sender.js";

export type OtlpFormat = "protobuf" | "json";
/** The OTLP signal an export record holds: traces unless it says logs. */
export type RecordSignal = "traces" | "logs";

export interface ExportRecord {
  readonly otlp_export: 1;
  readonly project_id: number;
  readonly user_id: number;
  readonly received_at_ms: number;
  readonly format: OtlpFormat;
  readonly signal?: "logs";
  /** The (decompressed) export body, base64. */
  readonly body: string;
}

/** What begins the log key of an export record; the project id follows it. */
export const EXPORT_RECORD_KEY_PREFIX = "otlp:";

export const exportRecordKey = (projectId: number): string => `${EXPORT_RECORD_KEY_PREFIX}${projectId}`;

/** The export as one log record (a buffer of its own: a decode thread transfers it). */
export function encodeExportRecord(body: Uint8Array, format: OtlpFormat, sender: Sender, receivedAtMs: number, signal: RecordSignal = "traces"): EncodedEvents {
  const kind = signal === "logs" ? `"signal":"logs",` : "";
  const head = `{"otlp_export":1,"project_id":${sender.projectId},"user_id":${sender.userId},"received_at_ms":${receivedAtMs},"format":"${format}",${kind}"body":"`;
  const b64 = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("base64");
  return { ...encodeAsciiRecord([head, b64, '"}']), keys: [exportRecordKey(sender.projectId)] };
}

/** Whether `x` is an export record; one logged before projects existed gets its user's personal project. */
export function isExportRecord(x: unknown): x is ExportRecord {
  const r = x as Partial<ExportRecord> | null;
  return (
    typeof r === "object" && r !== null && r.otlp_export === 1 && Number.isSafeInteger(r.user_id) && Number.isFinite(r.received_at_ms) &&
    (r.format === "protobuf" || r.format === "json") && (r.signal === undefined || r.signal === "logs") && typeof r.body === "string" &&
    namesProject(r)
  );
}

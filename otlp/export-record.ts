/**
 * An OTLP export as one event-log record, so that a receiver acknowledges an export once it is durable without
 * mapping it: decoding it (to answer 400 for a body that is not an export) and finding its malformed spans (for
 * partial_success) cost a fifth of mapping it, enriching and serialising its events. The pipeline expands the
 * record into events (export-events.ts) when it reads it.
 *
 * The record is JSON, like an event record, so a batch of mixed records still decodes with one JSON.parse:
 *   {"otlp_export":1,"user_id":7,"received_at_ms":1764000000000,"format":"protobuf","body":"<base64>"}
 * `body` is the export as the client sent it, decompressed. Everything the expansion derives comes from the record
 * (ids from trace and span ids, the receive time from received_at_ms), so a record processed twice yields the same
 * events, which the pipeline's duplicate check then skips.
 *
 * Log key: one per user (`otlp:<user id>`), not per run: an export holds many traces, and a trace's spans arrive
 * in several exports, so with a key per user every export of a trace reaches the same consumer, in order.
 */
import type { LoggedEvent } from "../core/events/schema.js";
import { encodeBatch, type EncodedEvents } from "../core/events/wire.js";
import { eventsOfSpans, type RefusedSpans } from "./export-events.js";
import { decodeJsonExport } from "./otlp-json.js";
import { decodeProtobufExport } from "./otlp-protobuf.js";
import type { OtlpSpan } from "./trace-model.js";

export type OtlpFormat = "protobuf" | "json";

export interface ExportRecord {
  readonly otlp_export: 1;
  readonly user_id: number;
  readonly received_at_ms: number;
  readonly format: OtlpFormat;
  /** The (decompressed) export body, base64. */
  readonly body: string;
}

/**
 * The most body bytes logged as one export record. A larger export (up to RUNWATCH_OTLP_MAX_BODY_BYTES) is mapped by
 * the receiver and logged as events: the record, a third larger as base64, must fit a Kafka message (the topic
 * takes 10 MiB, core/log/kafka-log.ts), and the pipeline reads a bounded number of bytes per batch.
 */
export const MAX_EXPORT_RECORD_BODY_BYTES = 4 * 1024 * 1024;

export const exportRecordKey = (userId: number): string => `otlp:${userId}`;

export function decodeExportBody(body: Uint8Array, format: OtlpFormat): OtlpSpan[] {
  return format === "json" ? decodeJsonExport(body) : decodeProtobufExport(body);
}

/** The export as one log record (a buffer of its own: a decode thread transfers it). */
export function encodeExportRecord(body: Uint8Array, format: OtlpFormat, userId: number, receivedAtMs: number): EncodedEvents {
  const head = `{"otlp_export":1,"user_id":${userId},"received_at_ms":${receivedAtMs},"format":"${format}","body":"`;
  const b64 = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("base64");
  const record = Buffer.from(`${head}${b64}"}`, "latin1");
  return { ...encodeBatch([record]), keys: [exportRecordKey(userId)] };
}

export function isExportRecord(x: unknown): x is ExportRecord {
  const r = x as Partial<ExportRecord> | null;
  return (
    typeof r === "object" && r !== null && r.otlp_export === 1 && Number.isSafeInteger(r.user_id) && Number.isFinite(r.received_at_ms) &&
    (r.format === "protobuf" || r.format === "json") && typeof r.body === "string"
  );
}

/**
 * The events of an export record, and the spans it refuses (none but malformed ones, which the receiver already
 * counted in partial_success). Throws MalformedExport when the body is not an export (not from a Runwatch receiver).
 */
export function expandExportRecord(record: ExportRecord): { events: LoggedEvent[]; refused: RefusedSpans[] } {
  const spans = decodeExportBody(Buffer.from(record.body, "base64"), record.format);
  return eventsOfSpans(spans, record.user_id, record.received_at_ms);
}

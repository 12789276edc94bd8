/**
 * OTLP exports logged whole (core/events/export-record.ts has the record's format): a receiver acknowledges an
 * export once it is durable, without mapping it. Decoding it (to answer 400 for a body that is not an export) and
 * finding its malformed spans (for partial_success) cost a fifth of mapping it, enriching and serialising its
 * events. The pipeline expands the record into events (export-events.ts) when it reads it.
 *
 * Everything the expansion derives comes from the record (ids from trace and span ids, the receive time from
 * received_at_ms), so a record processed twice yields the same events, which the pipeline's duplicate check then
 * skips.
 */
import type { ExportRecord, OtlpFormat } from "../core/events/export-record.js";
import type { LoggedEvent } from "../core/events/schema.js";
import { eventsOfSpans, type RefusedSpans } from "./export-events.js";
import { decodeJsonExport } from "./otlp-json.js";
import { decodeProtobufExport } from "./otlp-protobuf.js";
import type { OtlpSpan, SpanDetail } from "./trace-model.js";

/**
 * The most body bytes logged as one export record. A larger export (up to RUNWATCH_OTLP_MAX_BODY_BYTES) is mapped by
 * the receiver and logged as events: the record, a third larger as base64, must fit a Kafka message (the topic
 * takes 10 MiB, core/log/kafka-log.ts), and the pipeline reads a bounded number of bytes per batch.
 */
export const MAX_EXPORT_RECORD_BODY_BYTES = 4 * 1024 * 1024;

export function decodeExportBody(body: Uint8Array, format: OtlpFormat, detail: SpanDetail = "all"): OtlpSpan[] {
  return format === "json" ? decodeJsonExport(body, detail) : decodeProtobufExport(body, detail);
}

/**
 * The events of an export record, and the spans it refuses (none but malformed ones, which the receiver already
 * counted in partial_success). Throws MalformedExport when the body is not an export (not from a Runwatch receiver).
 */
export function expandExportRecord(record: ExportRecord): { events: LoggedEvent[]; refused: RefusedSpans[] } {
  const spans = decodeExportBody(Buffer.from(record.body, "base64"), record.format);
  return eventsOfSpans(spans, { projectId: record.project_id, userId: record.user_id }, record.received_at_ms);
}

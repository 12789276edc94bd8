/**
 * The receivers' work on a log or metric export once its bytes are read, beside export-decode.ts's for traces and
 * with the same answers: gunzip (bounded), decoding (400 / INVALID_ARGUMENT when the body is not an export), the most
 * items of one export (RUNWATCH_OTLP_MAX_SPANS, 413), what the log receives and the response body.
 *
 * Logs are logged whole as export records with `"signal":"logs"` (core/events/export-record.ts) and mapped by the
 * pipeline (logs-mapping.ts), so acknowledging costs decoding alone, found malformed ids included; an export larger
 * than a record may be is split into several (logs-split.ts). Metrics are counted, not kept (otlp-metrics.ts).
 */
import { encodeExportRecord } from "../core/events/export-record.js";
import type { Sender } from "../core/events/sender.js";
import { encodeBatch, encodeEvents, recordAt, type EncodedEvents } from "../core/events/wire.js";
import { gunzip, reasonsText, TooLarge, type DecodedExport, type ExportLimits, type OtlpFormat } from "./export-decode.js";
import { MAX_EXPORT_RECORD_BODY_BYTES } from "./export-record.js";
import { splitLogsBody } from "./logs-split.js";
import { decodeJsonLogs, decodeProtobufLogs, logRefusalOf, signalResponse } from "./otlp-logs.js";
import { countMetricPoints, METRICS_NOT_KEPT } from "./otlp-metrics.js";
import { MalformedExport } from "./trace-model.js";

export type OtlpSignal = "traces" | "logs" | "metrics";

export function decodeSignalExport(
  signal: "logs" | "metrics", body: Uint8Array, format: OtlpFormat, gzipped: boolean, sender: Sender, receivedAtMs: number, limits: ExportLimits,
  maxRecordBytes = MAX_EXPORT_RECORD_BODY_BYTES,
): DecodedExport {
  try {
    const plain = gzipped ? gunzip(body, limits.maxBytes) : body;
    return signal === "logs" ? decodeLogs(plain, format, sender, receivedAtMs, limits.maxSpans, maxRecordBytes) : decodeMetrics(plain, format);
  } catch (err) {
    if (err instanceof MalformedExport) return { ok: false, status: 400, message: err.message };
    if (err instanceof TooLarge) return { ok: false, status: 413, message: err.message };
    throw err;
  }
}

function decodeLogs(body: Uint8Array, format: OtlpFormat, sender: Sender, receivedAtMs: number, maxItems: number, maxRecordBytes: number): DecodedExport {
  const logs = format === "json" ? decodeJsonLogs(body, "refusal") : decodeProtobufLogs(body, "refusal");
  if (logs.length > maxItems) {
    throw new TooLarge(`the export holds ${logs.length} log records; at most ${maxItems} (RUNWATCH_OTLP_MAX_SPANS) are taken at once — lower the exporter's batch size (OTEL_BLRP_MAX_EXPORT_BATCH_SIZE, or the collector's send_batch_max_size)`);
  }
  const reasons: string[] = [];
  logs.forEach((log, i) => {
    const why = logRefusalOf(log, i);
    if (why !== undefined) reasons.push(why);
  });
  let rejected = reasons.length;
  let events: EncodedEvents = encodeEvents([]);
  let records = 0;
  if (rejected < logs.length) {
    // The pipeline skips the malformed records again (logs-mapping.ts), so the body is logged as it came.
    if (body.byteLength <= maxRecordBytes) {
      events = encodeExportRecord(body, format, sender, receivedAtMs, "logs");
      records = 1;
    } else {
      const split = splitLogsBody(body, format, maxRecordBytes);
      for (const why of split.refused) reasons.push(why);
      rejected += split.refused.length;
      const parts = split.bodies.map((b) => encodeExportRecord(b, format, sender, receivedAtMs, "logs"));
      records = parts.length;
      if (records > 0) events = { ...encodeBatch(parts.map((p) => recordAt(p, 0))), keys: parts.map((p) => p.keys[0]!) };
    }
  }
  return { ok: true, events, records, spans: logs.length, rejectedSpans: rejected, response: signalResponse("logs", format, rejected, reasonsText(reasons)) };
}

function decodeMetrics(body: Uint8Array, format: OtlpFormat): DecodedExport {
  const points = countMetricPoints(body, format);
  return {
    ok: true,
    events: encodeEvents([]),
    records: 0,
    // Nothing is stored, so nothing is charged to the quota.
    spans: points,
    rejectedSpans: points,
    response: signalResponse("metrics", format, points, points > 0 ? METRICS_NOT_KEPT : ""),
  };
}

/**
 * Everything an OTLP trace export goes through once its bytes have been read, for OTLP/HTTP and OTLP/gRPC alike:
 * gunzip (bounded), protobuf or JSON decoding (400 / INVALID_ARGUMENT when the body is not an export), the spans
 * refused (malformed ids or times: counted in partial_success), what the log receives and the response body.
 * The caller says where the export is mapped (`logWhole`): here (export-events.ts), with its events logged, or by
 * the pipeline, the export logged whole as one record (core/events/export-record.ts). Mapping here spreads the work
 * over the decode threads; logging whole acknowledges a burst several times faster (docs/BENCHMARKS.md, "Ingest's work
 * per body"). An export larger than MAX_EXPORT_RECORD_BODY_BYTES is always mapped here. Either way the answer and what
 * is stored are the same: the mapping is total, so only malformed spans are refused. Pure and thread-agnostic: it runs
 * on the ingest decode threads (web/ingest/decode-thread.ts).
 */
import { gunzipSync } from "node:zlib";
import { encodeEvents, type EncodedEvents } from "../core/events/wire.js";
import { eventsOfSpans } from "./export-events.js";
import { encodeExportRecord, type OtlpFormat } from "../core/events/export-record.js";
import type { Sender } from "../core/events/sender.js";
import { decodeExportBody, MAX_EXPORT_RECORD_BODY_BYTES } from "./export-record.js";
import { refusalOf } from "./mapping.js";
import { jsonResponse } from "./otlp-json.js";
import { encodeProtobufResponse } from "./otlp-protobuf.js";
import { MalformedExport } from "./trace-model.js";

export type { OtlpFormat };

export type DecodedExport =
  | {
      readonly ok: true;
      /** What the log receives: one export record, or events. */
      readonly events: EncodedEvents;
      /** How many records that is (0: every span was refused, nothing to append). */
      readonly records: number;
      readonly spans: number;
      readonly rejectedSpans: number;
      /** ExportTraceServiceResponse in the request's format. */
      readonly response: Uint8Array<ArrayBuffer>;
    }
  | { readonly ok: false; readonly status: 400 | 413; readonly message: string };

export interface ExportLimits {
  /** The most bytes a body may have once decompressed (RUNWATCH_OTLP_MAX_BODY_BYTES). */
  readonly maxBytes: number;
  /** The most spans one export may hold (RUNWATCH_OTLP_MAX_SPANS). */
  readonly maxSpans: number;
}

/** How many refusals partial_success.error_message spells out. */
const REASONS_SHOWN = 3;

/** partial_success.error_message: the first reasons, and how many more there are. */
export const reasonsText = (reasons: readonly string[]): string =>
  reasons.length === 0 ? "" : reasons.slice(0, REASONS_SHOWN).join("; ") + (reasons.length > REASONS_SHOWN ? `; and ${reasons.length - REASONS_SHOWN} more` : "");

/** The body decompressed, at most maxBytes (TooLarge past them, MalformedExport when it is not gzip). */
export function gunzip(body: Uint8Array, maxBytes: number): Uint8Array {
  try {
    return gunzipSync(body, { maxOutputLength: maxBytes });
  } catch (err) {
    if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
      throw new TooLarge(`the body exceeds the limit of ${maxBytes} bytes once decompressed`);
    }
    throw new MalformedExport(`the body is not valid gzip (Content-Encoding: gzip): ${(err as Error).message}`);
  }
}
export class TooLarge extends Error {}

export function decodeOtlpExport(
  body: Uint8Array, format: OtlpFormat, gzipped: boolean, sender: Sender, receivedAtMs: number, limits: ExportLimits, logWhole: boolean,
): DecodedExport {
  try {
    return decode(gzipped ? gunzip(body, limits.maxBytes) : body, format, sender, receivedAtMs, limits.maxSpans, logWhole);
  } catch (err) {
    if (err instanceof MalformedExport) return { ok: false, status: 400, message: err.message };
    if (err instanceof TooLarge) return { ok: false, status: 413, message: err.message };
    throw err;
  }
}

function decode(body: Uint8Array, format: OtlpFormat, sender: Sender, receivedAtMs: number, maxSpans: number, logWhole: boolean): DecodedExport {
  const whole = logWhole && body.byteLength <= MAX_EXPORT_RECORD_BODY_BYTES;
  // Logged whole, the export is mapped by the pipeline: here only malformed spans are found, from ids and times.
  const spans = decodeExportBody(body, format, whole ? "refusal" : "all");
  // Tiny spans fill 16 MiB by the hundred thousand: each becomes events held in memory until the log has them.
  if (spans.length > maxSpans) {
    throw new TooLarge(`the export holds ${spans.length} spans; at most ${maxSpans} (RUNWATCH_OTLP_MAX_SPANS) are taken at once — lower the exporter's batch size (OTEL_BSP_MAX_EXPORT_BATCH_SIZE, or the collector's send_batch_max_size)`);
  }
  let reasons: string[];
  let rejected: number;
  let events: EncodedEvents;
  let records: number;
  if (whole) {
    // The pipeline maps it; only malformed spans are refused, which decoding tells.
    reasons = [];
    spans.forEach((span, i) => {
      const why = refusalOf(span, i);
      if (why !== undefined) reasons.push(why);
    });
    rejected = reasons.length;
    records = rejected < spans.length ? 1 : 0;
    events = records > 0 ? encodeExportRecord(body, format, sender, receivedAtMs) : encodeEvents([]);
  } else {
    const mapped = eventsOfSpans(spans, sender, receivedAtMs);
    reasons = mapped.refused.map((r) => r.reason);
    rejected = mapped.refused.reduce((n, r) => n + r.spans, 0);
    records = mapped.events.length;
    events = encodeEvents(mapped.events);
  }
  const message = reasonsText(reasons);
  return {
    ok: true,
    events,
    records,
    spans: spans.length,
    rejectedSpans: rejected,
    // A copy with a buffer of its own (Buffer.from and protobufjs may use a shared pool): a decode thread transfers it.
    response: new Uint8Array(format === "json" ? Buffer.from(jsonResponse(rejected, message)) : encodeProtobufResponse(rejected, message)),
  };
}

/**
 * Everything an OTLP trace export goes through once its bytes have been read, for OTLP/HTTP and OTLP/gRPC alike:
 * gunzip (bounded), protobuf or JSON decoding (400 / INVALID_ARGUMENT when the body is not an export), the
 * mapping (mapping.ts), the ingest value rules for each event (core/events/schema.ts checkBuiltEvent), enrichment,
 * the serialised events for the log and the response body. A span whose events break a rule is refused and
 * counted in partial_success; the other spans are taken. Pure and thread-agnostic: it runs on the ingest decode
 * threads (web/ingest/decode-thread.ts).
 */
import { gunzipSync } from "node:zlib";
import { Either } from "effect";
import { checkBuiltEvent, type IngestEvent, type LoggedEvent } from "../core/events/schema.js";
import { encodeEvents, type EncodedEvents } from "../core/events/wire.js";
import { enrichEvent } from "../core/events/enrich.js";
import { mapExport, type RawEvent } from "./mapping.js";
import { decodeJsonExport, jsonResponse } from "./otlp-json.js";
import { decodeProtobufExport, encodeProtobufResponse } from "./otlp-protobuf.js";
import { MalformedExport } from "./trace-model.js";

export type OtlpFormat = "protobuf" | "json";

export type DecodedExport =
  | {
      readonly ok: true;
      readonly events: EncodedEvents;
      /** Events accepted (what the log receives). */
      readonly accepted: number;
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

function gunzip(body: Uint8Array, maxBytes: number): Uint8Array {
  try {
    return gunzipSync(body, { maxOutputLength: maxBytes });
  } catch (err) {
    if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
      throw new TooLarge(`the body exceeds the limit of ${maxBytes} bytes once decompressed`);
    }
    throw new MalformedExport(`the body is not valid gzip (Content-Encoding: gzip): ${(err as Error).message}`);
  }
}
class TooLarge extends Error {}

export function decodeOtlpExport(
  body: Uint8Array, format: OtlpFormat, gzipped: boolean, userId: number, receivedAtMs: number, limits: ExportLimits,
): DecodedExport {
  try {
    return decode(gzipped ? gunzip(body, limits.maxBytes) : body, format, userId, receivedAtMs, limits.maxSpans);
  } catch (err) {
    if (err instanceof MalformedExport) return { ok: false, status: 400, message: err.message };
    if (err instanceof TooLarge) return { ok: false, status: 413, message: err.message };
    throw err;
  }
}

/** The first ValidationError of an event, as text naming the field; undefined when it passes. */
function refusal(raw: RawEvent, userId: number, receivedAt: Date, runIds: Map<string, string>, out: LoggedEvent[]): string | undefined {
  const parsed = checkBuiltEvent(raw as unknown as IngestEvent);
  if (Either.isLeft(parsed)) return parsed.left.message;
  out.push(enrichEvent(parsed.right, userId, receivedAt, runIds));
  return undefined;
}

function decode(body: Uint8Array, format: OtlpFormat, userId: number, receivedAtMs: number, maxSpans: number): DecodedExport {
  const spans = format === "json" ? decodeJsonExport(body) : decodeProtobufExport(body);
  // Tiny spans fill 16 MiB by the hundred thousand: each becomes events held in memory until the log has them.
  if (spans.length > maxSpans) {
    throw new TooLarge(`the export holds ${spans.length} spans; at most ${maxSpans} (RUNWATCH_OTLP_MAX_SPANS) are taken at once — lower the exporter's batch size (OTEL_BSP_MAX_EXPORT_BATCH_SIZE, or the collector's send_batch_max_size)`);
  }
  const mapped = mapExport(spans);
  const reasons = mapped.refused.map((r) => r.reason);
  let rejected = mapped.refused.length;
  const receivedAt = new Date(receivedAtMs);
  const runIds = new Map<string, string>();
  const accepted: LoggedEvent[] = [];
  for (const trace of mapped.traces) {
    const start: LoggedEvent[] = [];
    const why = refusal(trace.runStart, userId, receivedAt, runIds, start);
    if (why !== undefined) {
      rejected += trace.spans.length;
      reasons.push(`trace ${trace.traceId}: ${why}`);
      continue;
    }
    const taken: LoggedEvent[] = [];
    for (const span of trace.spans) {
      const own: LoggedEvent[] = [];
      const spanWhy = span.events.map((e) => refusal(e, userId, receivedAt, runIds, own)).find((w) => w !== undefined);
      if (spanWhy === undefined) taken.push(...own);
      else {
        rejected++;
        reasons.push(`span ${span.index} (${String(span.events[0]!.span_id)}): ${spanWhy}`);
      }
    }
    if (taken.length > 0) accepted.push(...start, ...taken);
  }
  const message = reasons.length === 0
    ? ""
    : reasons.slice(0, REASONS_SHOWN).join("; ") + (reasons.length > REASONS_SHOWN ? `; and ${reasons.length - REASONS_SHOWN} more` : "");
  return {
    ok: true,
    events: encodeEvents(accepted),
    accepted: accepted.length,
    spans: spans.length,
    rejectedSpans: rejected,
    // A copy with a buffer of its own (Buffer.from and protobufjs may use a shared pool): a decode thread transfers it.
    response: new Uint8Array(format === "json" ? Buffer.from(jsonResponse(rejected, message)) : encodeProtobufResponse(rejected, message)),
  };
}

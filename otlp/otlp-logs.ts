/**
 * OTLP log exports (ExportLogsServiceRequest), protobuf and JSON, decoded into the records logs-mapping.ts reads,
 * whatever the body's encoding. Like the span decoders, a receiver that logs the export whole asks only for what
 * tells whether a record can be taken ("refusal": ids), the pipeline for everything.
 */
import { attributes as jsonAttributes, anyValue as jsonAnyValue, field, isObj, jsonIdHex, list, text } from "./otlp-json.js";
import { anyValue as pbAnyValue, attributes as pbAttributes, load, type PbAnyValue, type PbKeyValue } from "./otlp-protobuf.js";
import { idHex, MalformedExport, nanosToMs, NO_ATTRIBUTES, type Attributes, type AttrValue, type SpanDetail } from "./trace-model.js";

export interface OtlpLog {
  /** Lowercase hex; "" when absent or all zeros; null when malformed (the record is refused). */
  readonly traceId: string | null;
  readonly spanId: string | null;
  /** time_unix_nano, else observed_time_unix_nano, in ms (NaN when neither is set: the receive time is used). */
  readonly timeMs: number;
  readonly severityNumber: number;
  readonly severityText: string;
  /** event_name, else the `event.name` attribute older SDKs send ("" for a plain log line). */
  readonly eventName: string;
  readonly body: AttrValue;
  readonly attributes: Attributes;
  readonly resource: Attributes;
  readonly scope: string;
}

interface PbLogRecord {
  readonly timeUnixNano: unknown;
  readonly observedTimeUnixNano: unknown;
  readonly severityNumber: number;
  readonly severityText: string;
  readonly body?: PbAnyValue | null;
  readonly attributes: readonly PbKeyValue[];
  readonly traceId: Uint8Array;
  readonly spanId: Uint8Array;
  readonly eventName: string;
}
interface PbLogsRequest {
  readonly resourceLogs: readonly {
    readonly resource?: { readonly attributes: readonly PbKeyValue[] } | null;
    readonly scopeLogs: readonly { readonly scope?: { readonly name: string } | null; readonly logRecords: readonly PbLogRecord[] }[];
  }[];
}

/** A time in ms: the record's time, else its observed time (0 means unset in OTLP). */
function timeOf(time: unknown, observed: unknown): number {
  const t = nanosToMs(time);
  if (t > 0) return t;
  const o = nanosToMs(observed);
  return o > 0 ? o : NaN;
}

const EVENT_NAME_ATTRIBUTE = "event.name";
function eventNameOf(eventName: string, attrs: Attributes): string {
  if (eventName) return eventName;
  const v = attrs.get(EVENT_NAME_ATTRIBUTE);
  return typeof v === "string" ? v : "";
}

/** An ExportLogsServiceRequest's records; MalformedExport when the bytes are not one. */
export function decodeProtobufLogs(body: Uint8Array, detail: SpanDetail = "all"): OtlpLog[] {
  let req: PbLogsRequest;
  try {
    req = load().logsRequest.decode(body) as unknown as PbLogsRequest;
  } catch (err) {
    throw new MalformedExport(`the body is not an OTLP ExportLogsServiceRequest (protobuf): ${(err as Error).message}`);
  }
  const all = detail === "all";
  const out: OtlpLog[] = [];
  for (const rl of req.resourceLogs) {
    const resource = all ? pbAttributes(rl.resource?.attributes) : NO_ATTRIBUTES;
    for (const sl of rl.scopeLogs) {
      const scope = sl.scope?.name ?? "";
      for (const r of sl.logRecords) {
        const attrs = all ? pbAttributes(r.attributes) : NO_ATTRIBUTES;
        out.push({
          traceId: idHex(r.traceId, 16),
          spanId: idHex(r.spanId, 8),
          timeMs: timeOf(r.timeUnixNano, r.observedTimeUnixNano),
          severityNumber: r.severityNumber ?? 0,
          severityText: r.severityText ?? "",
          eventName: eventNameOf(r.eventName ?? "", attrs),
          body: all ? pbAnyValue(r.body) : null,
          attributes: attrs,
          resource,
          scope,
        });
      }
    }
  }
  return out;
}

/** OTLP/JSON severity: a number, or its enum name (SEVERITY_NUMBER_INFO …). */
function severityOf(v: unknown): number {
  if (typeof v === "number") return v;
  if (typeof v === "string") {
    const named = /^SEVERITY_NUMBER_([A-Z]+)(\d?)$/.exec(v);
    if (!named) return Number(v) || 0;
    const base = { TRACE: 1, DEBUG: 5, INFO: 9, WARN: 13, ERROR: 17, FATAL: 21 }[named[1]!];
    return base === undefined ? 0 : base + Math.max(0, Number(named[2] || 1) - 1);
  }
  return 0;
}

/** An ExportLogsServiceRequest in OTLP/JSON; MalformedExport when the text is not one. */
export function decodeJsonLogs(body: Uint8Array, detail: SpanDetail = "all"): OtlpLog[] {
  let req: unknown;
  try {
    req = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"));
  } catch (err) {
    throw new MalformedExport(`the body is not valid JSON: ${(err as Error).message}`);
  }
  if (!isObj(req)) throw new MalformedExport('the body must be an OTLP/JSON ExportLogsServiceRequest, an object like {"resourceLogs": [...]}');
  const all = detail === "all";
  const out: OtlpLog[] = [];
  list(req, "resourceLogs", "resource_logs", "body").forEach((rl, i) => {
    if (!isObj(rl)) throw new MalformedExport(`resourceLogs[${i}] must be an object`);
    const res = rl.resource;
    const resource = all ? jsonAttributes(isObj(res) ? res.attributes : undefined) : NO_ATTRIBUTES;
    list(rl, "scopeLogs", "scope_logs", `resourceLogs[${i}]`).forEach((sl, j) => {
      if (!isObj(sl)) throw new MalformedExport(`resourceLogs[${i}].scopeLogs[${j}] must be an object`);
      const scope = isObj(sl.scope) ? text(sl.scope.name) : "";
      list(sl, "logRecords", "log_records", `resourceLogs[${i}].scopeLogs[${j}]`).forEach((r, k) => {
        if (!isObj(r)) throw new MalformedExport(`resourceLogs[${i}].scopeLogs[${j}].logRecords[${k}] must be an object`);
        const attrs = all ? jsonAttributes(r.attributes) : NO_ATTRIBUTES;
        out.push({
          traceId: jsonIdHex(field(r, "traceId", "trace_id"), 16),
          spanId: jsonIdHex(field(r, "spanId", "span_id"), 8),
          timeMs: timeOf(field(r, "timeUnixNano", "time_unix_nano"), field(r, "observedTimeUnixNano", "observed_time_unix_nano")),
          severityNumber: severityOf(field(r, "severityNumber", "severity_number")),
          severityText: text(field(r, "severityText", "severity_text")),
          eventName: eventNameOf(text(field(r, "eventName", "event_name")), attrs),
          body: all ? jsonAnyValue(r.body) : null,
          attributes: attrs,
          resource,
          scope,
        });
      });
    });
  });
  return out;
}

/** Why the record at `index` is refused (for partial_success); undefined when it is taken. */
export function logRefusalOf(log: OtlpLog, index: number): string | undefined {
  if (log.traceId === null) return `log record ${index}: traceId must be empty or 16 bytes (32 hex characters)`;
  if (log.spanId === null) return `log record ${index}: spanId must be empty or 8 bytes (16 hex characters)`;
  if (log.spanId && !log.traceId) return `log record ${index}: a spanId needs a traceId`;
  return undefined;
}

/** ExportLogsServiceResponse / ExportMetricsServiceResponse in the request's format. */
export function signalResponse(signal: "logs" | "metrics", format: "protobuf" | "json", rejected: number, message: string): Uint8Array<ArrayBuffer> {
  const key = signal === "logs" ? "rejectedLogRecords" : "rejectedDataPoints";
  const partial = rejected > 0 || message ? { partialSuccess: { [key]: rejected, errorMessage: message } } : {};
  if (format === "json") {
    const json = rejected > 0 || message ? { partialSuccess: { [key]: String(rejected), errorMessage: message } } : {};
    return new Uint8Array(Buffer.from(JSON.stringify(json)));
  }
  const t = signal === "logs" ? load().logsResponse : load().metricsResponse;
  return new Uint8Array(t.encode(t.fromObject(partial)).finish());
}

/** Decodes an ExportLogsServiceResponse or ExportMetricsServiceResponse (tests read partial_success with it). */
export function decodeSignalResponse(signal: "logs" | "metrics", bytes: Uint8Array): Record<string, unknown> {
  const t = signal === "logs" ? load().logsResponse : load().metricsResponse;
  return t.toObject(t.decode(bytes), { longs: Number }) as Record<string, unknown>;
}

/** Encodes an ExportLogsServiceRequest from its protobufjs object form (test fixtures). */
export function encodeProtobufLogs(request: Record<string, unknown>): Uint8Array {
  const t = load().logsRequest;
  return t.encode(t.fromObject(request)).finish();
}

/**
 * OTLP/JSON bodies (opentelemetry-proto docs/specification.md, "JSON Protobuf Encoding"): lowerCamelCase keys
 * (the proto's snake_case names are accepted too), trace and span ids as hex (base64, which a generic protobuf JSON
 * encoder writes, is accepted too), int64 as strings or numbers, enums as integers (or their names), unknown fields
 * ignored. Produces the spans otlp-protobuf.ts produces for the same export.
 */
import {
  idHex, int64, MalformedExport, nanosToMs, NO_ATTRIBUTES, type Attributes, type AttrValue, type OtlpSpan, type OtlpSpanEvent, type OtlpSpanLink, type SpanDetail,
} from "./trace-model.js";

type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
/** A field by its JSON name or its proto name. */
export const field = (o: Obj, camel: string, snake: string): unknown => (o[camel] !== undefined ? o[camel] : o[snake]);
export const list = (o: Obj, camel: string, snake: string, where: string): unknown[] => {
  const v = field(o, camel, snake);
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new MalformedExport(`${where}.${camel} must be an array`);
  return v;
};
export const text = (v: unknown): string => (typeof v === "string" ? v : "");

const STATUS_CODES: Record<string, number> = { STATUS_CODE_UNSET: 0, STATUS_CODE_OK: 1, STATUS_CODE_ERROR: 2 };

/** A trace id (16 bytes) or span id (8 bytes), hex or base64, as lowercase hex: "" when absent or all zeros, null when malformed. */
export function jsonIdHex(v: unknown, length: 8 | 16): string | null {
  if (v === undefined || v === null || v === "") return "";
  if (typeof v !== "string") return null;
  if (v.length === length * 2 && /^[0-9a-fA-F]+$/.test(v)) return /^0+$/.test(v) ? "" : v.toLowerCase();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(v)) return null;
  return idHex(Buffer.from(v, "base64"), length);
}

export function anyValue(v: unknown, depth = 0): AttrValue {
  if (!isObj(v) || depth > 64) return null;
  const s = field(v, "stringValue", "string_value");
  // A value of the wrong JSON type is left out: an object here could not even be turned into text.
  if (s !== undefined) return typeof s === "string" ? s : typeof s === "number" || typeof s === "boolean" ? String(s) : null;
  const b = field(v, "boolValue", "bool_value");
  if (b !== undefined) return b === true || b === "true";
  const i = field(v, "intValue", "int_value");
  if (i !== undefined) return int64(i);
  const d = field(v, "doubleValue", "double_value");
  if (d !== undefined) return typeof d === "number" ? d : typeof d === "string" ? Number(d) : null;
  const a = field(v, "arrayValue", "array_value");
  if (a !== undefined) return isObj(a) && Array.isArray(a.values) ? a.values.map((x) => anyValue(x, depth + 1)) : [];
  const kv = field(v, "kvlistValue", "kvlist_value");
  if (kv !== undefined) {
    const values = isObj(kv) && Array.isArray(kv.values) ? kv.values : [];
    return Object.fromEntries(values.filter(isObj).map((e) => [text(e.key), anyValue(e.value, depth + 1)]));
  }
  const by = field(v, "bytesValue", "bytes_value");
  if (by !== undefined) return text(by);
  return null;
}

export function attributes(v: unknown): Attributes {
  const m = new Map<string, AttrValue>();
  if (Array.isArray(v)) for (const kv of v) if (isObj(kv)) m.set(text(kv.key), anyValue(kv.value));
  return m;
}

const spanEvent = (e: unknown): OtlpSpanEvent => {
  const o = isObj(e) ? e : {};
  return { name: text(o.name), timeMs: nanosToMs(field(o, "timeUnixNano", "time_unix_nano")), attributes: attributes(o.attributes) };
};

const spanLink = (l: Obj): OtlpSpanLink => ({
  traceId: jsonIdHex(field(l, "traceId", "trace_id"), 16) || null,
  spanId: jsonIdHex(field(l, "spanId", "span_id"), 8) || null,
  attributes: attributes(l.attributes),
});

function statusCode(v: unknown): number {
  if (typeof v === "number") return v;
  if (typeof v === "string") return STATUS_CODES[v] ?? (Number(v) || 0);
  return 0;
}

/** An ExportTraceServiceRequest in OTLP/JSON, its spans in the detail asked; MalformedExport when the text is not one. */
export function decodeJsonExport(body: Uint8Array, detail: SpanDetail = "all"): OtlpSpan[] {
  let req: unknown;
  try {
    req = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"));
  } catch (err) {
    throw new MalformedExport(`the body is not valid JSON: ${(err as Error).message}`);
  }
  if (!isObj(req)) throw new MalformedExport('the body must be an OTLP/JSON ExportTraceServiceRequest, an object like {"resourceSpans": [...]}');
  const all = detail === "all";
  const spans: OtlpSpan[] = [];
  list(req, "resourceSpans", "resource_spans", "body").forEach((rs, i) => {
    if (!isObj(rs)) throw new MalformedExport(`resourceSpans[${i}] must be an object`);
    const res = field(rs, "resource", "resource");
    const resource = all ? attributes(isObj(res) ? res.attributes : undefined) : NO_ATTRIBUTES;
    list(rs, "scopeSpans", "scope_spans", `resourceSpans[${i}]`).forEach((ss, j) => {
      if (!isObj(ss)) throw new MalformedExport(`resourceSpans[${i}].scopeSpans[${j}] must be an object`);
      const scopeObj = field(ss, "scope", "scope");
      const scope = isObj(scopeObj) ? text(scopeObj.name) : "";
      list(ss, "spans", "spans", `resourceSpans[${i}].scopeSpans[${j}]`).forEach((s, k) => {
        if (!isObj(s)) throw new MalformedExport(`resourceSpans[${i}].scopeSpans[${j}].spans[${k}] must be an object`);
        const status = isObj(s.status) ? s.status : {};
        spans.push({
          traceId: jsonIdHex(field(s, "traceId", "trace_id"), 16),
          spanId: jsonIdHex(field(s, "spanId", "span_id"), 8),
          parentSpanId: jsonIdHex(field(s, "parentSpanId", "parent_span_id"), 8),
          name: text(s.name),
          startMs: nanosToMs(field(s, "startTimeUnixNano", "start_time_unix_nano")),
          endMs: nanosToMs(field(s, "endTimeUnixNano", "end_time_unix_nano")),
          attributes: all ? attributes(s.attributes) : NO_ATTRIBUTES,
          statusCode: statusCode(status.code),
          statusMessage: text(status.message),
          events: all && Array.isArray(s.events) ? s.events.map(spanEvent) : [],
          links: all && Array.isArray(s.links) && s.links.length > 0 ? s.links.filter(isObj).map(spanLink) : undefined,
          resource,
          scope,
        });
      });
    });
  });
  return spans;
}

/** The OTLP/JSON ExportTraceServiceResponse. */
export function jsonResponse(rejectedSpans: number, errorMessage: string): string {
  return JSON.stringify(rejectedSpans > 0 || errorMessage ? { partialSuccess: { rejectedSpans: String(rejectedSpans), errorMessage } } : {});
}

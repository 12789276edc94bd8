/**
 * OTLP protobuf bodies (OTLP/HTTP `application/x-protobuf` and OTLP/gRPC): the official .proto files
 * (otlp/proto, from open-telemetry/opentelemetry-proto, Apache-2.0) loaded by protobufjs, which generates the
 * decoder and encoder at load time. Also google.rpc.Status and RetryInfo, which OTLP error responses carry.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";
import {
  idHex, int64, MalformedExport, nanosToMs, NO_ATTRIBUTES, type Attributes, type AttrValue, type OtlpSpan, type OtlpSpanEvent, type SpanDetail,
} from "./trace-model.js";

const PROTO_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "proto");

/** google.rpc types (googleapis/google/rpc/status.proto, error_details.proto), the fields OTLP uses. */
const GOOGLE_RPC = `
syntax = "proto3";
package google.rpc;
message Any { string type_url = 1; bytes value = 2; }
message Status { int32 code = 1; string message = 2; repeated Any details = 3; }
message Duration { int64 seconds = 1; int32 nanos = 2; }
message RetryInfo { Duration retry_delay = 1; }
`;

interface Types {
  readonly request: protobuf.Type;
  readonly response: protobuf.Type;
  /** ExportLogsServiceRequest/Response and ExportMetricsServiceRequest/Response (otlp-logs.ts, otlp-metrics.ts). */
  readonly logsRequest: protobuf.Type;
  readonly logsResponse: protobuf.Type;
  readonly metricsRequest: protobuf.Type;
  readonly metricsResponse: protobuf.Type;
  readonly status: protobuf.Type;
  readonly retryInfo: protobuf.Type;
}

/** Parses a .proto file of PROTO_DIR and the files it imports into root (what Root#loadSync does, minus resolving). */
function parseProto(root: protobuf.Root, file: string, seen = new Set<string>()): void {
  if (seen.has(file)) return;
  seen.add(file);
  const parsed = protobuf.parse(readFileSync(path.join(PROTO_DIR, file), "utf8"), root);
  for (const dependency of [...(parsed.imports ?? []), ...(parsed.weakImports ?? [])]) parseProto(root, dependency, seen);
}

/** Adds one feature to a field's own (edition) features, keeping the others; before the types are resolved. */
const setFeature = (field: protobuf.Field, feature: Record<string, string>): void =>
  void field.setOption("features", { ...(field.options?.features as object | undefined), ...feature } as never);

/**
 * Decodes invalid UTF-8 in every string field to U+FFFD instead of refusing the message (proto3's default would
 * refuse the whole export, 400). OpenTelemetry's JS exporters encode a lone surrogate (a truncated LLM stream) as
 * such bytes; the value rules (core/events/storable.ts) repair the same text in OTLP/JSON. The Collector's receiver
 * passes such strings on (opentelemetry-collector#11449), and OpenTelemetry's proposed policy (oteps#257) is this
 * one: correct them with U+FFFD rather than lose the batch. Set as a field feature before the types are resolved:
 * protobufjs picks its string reader from it.
 */
function decodeStringsLeniently(ns: protobuf.NamespaceBase): void {
  for (const nested of ns.nestedArray) {
    if (nested instanceof protobuf.Type) {
      for (const field of nested.fieldsArray) if (field.type === "string") setFeature(field, { utf8_validation: "NONE" });
    }
    if (nested instanceof protobuf.Namespace) decodeStringsLeniently(nested);
  }
}

/**
 * AnyValue's members as fields with explicit presence instead of a oneof. protobufjs decodes a oneof member by also
 * setting the oneof's virtual property, whose setter deletes every other member from the message, once per attribute
 * (docs/BENCHMARKS.md, "Ingest's work per body"). Without the oneof the generated decoder only assigns the member,
 * which is then the message's one own property (anyValue() below reads it). The wire format is the same; of several
 * members sent in one AnyValue (which no encoder writes), anyValue() takes the first in its order, not the last.
 */
function anyValueWithoutOneof(root: protobuf.Root): void {
  const type = root.lookupType("opentelemetry.proto.common.v1.AnyValue");
  for (const oneof of type.oneofsArray) {
    for (const field of [...oneof.fieldsArray]) {
      oneof.remove(field);
      setFeature(field, { field_presence: "EXPLICIT" });
    }
    type.remove(oneof);
  }
}

let types: Types | undefined;
/** The protobuf types, loaded on first use. */
export function load(): Types {
  if (types) return types;
  const root = new protobuf.Root();
  const seen = new Set<string>(); // the services share common.proto and resource.proto
  parseProto(root, "opentelemetry/proto/collector/trace/v1/trace_service.proto", seen);
  parseProto(root, "opentelemetry/proto/collector/logs/v1/logs_service.proto", seen);
  parseProto(root, "opentelemetry/proto/collector/metrics/v1/metrics_service.proto", seen);
  protobuf.parse(GOOGLE_RPC, root);
  decodeStringsLeniently(root);
  anyValueWithoutOneof(root);
  root.resolveAll();
  return (types = {
    request: root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest"),
    response: root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse"),
    status: root.lookupType("google.rpc.Status"),
    retryInfo: root.lookupType("google.rpc.RetryInfo"),
    logsRequest: root.lookupType("opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest"),
    logsResponse: root.lookupType("opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse"),
    metricsRequest: root.lookupType("opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest"),
    metricsResponse: root.lookupType("opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse"),
  });
}

/* The decoded message shapes this module reads (protobufjs leaves unset fields at their defaults). */
/** AnyValue: exactly its one set member is an own property (see anyValueWithoutOneof). */
export interface PbAnyValue {
  readonly stringValue?: string;
  readonly boolValue?: boolean;
  readonly intValue?: unknown;
  readonly doubleValue?: number;
  readonly arrayValue?: { readonly values?: readonly PbAnyValue[] };
  readonly kvlistValue?: { readonly values?: readonly PbKeyValue[] };
  readonly bytesValue?: Uint8Array;
}
export interface PbKeyValue { readonly key: string; readonly value?: PbAnyValue | null }
interface PbEvent { readonly timeUnixNano: unknown; readonly name: string; readonly attributes: readonly PbKeyValue[] }
interface PbLink { readonly traceId: Uint8Array; readonly spanId: Uint8Array; readonly attributes: readonly PbKeyValue[] }
interface PbSpan {
  readonly traceId: Uint8Array;
  readonly spanId: Uint8Array;
  readonly parentSpanId: Uint8Array;
  readonly name: string;
  readonly startTimeUnixNano: unknown;
  readonly endTimeUnixNano: unknown;
  readonly attributes: readonly PbKeyValue[];
  readonly events: readonly PbEvent[];
  readonly links: readonly PbLink[];
  readonly status?: { readonly code: number; readonly message: string } | null;
}
interface PbRequest {
  readonly resourceSpans: readonly {
    readonly resource?: { readonly attributes: readonly PbKeyValue[] } | null;
    readonly scopeSpans: readonly { readonly scope?: { readonly name: string } | null; readonly spans: readonly PbSpan[] }[];
  }[];
}

const has = Object.hasOwn;

export function anyValue(v: PbAnyValue | null | undefined, depth = 0): AttrValue {
  if (!v || depth > 64) return null;
  if (has(v, "stringValue")) return v.stringValue!;
  if (has(v, "intValue")) return int64(v.intValue);
  if (has(v, "doubleValue")) return v.doubleValue!;
  if (has(v, "boolValue")) return v.boolValue!;
  if (has(v, "arrayValue")) return (v.arrayValue?.values ?? []).map((x) => anyValue(x, depth + 1));
  if (has(v, "kvlistValue")) return Object.fromEntries((v.kvlistValue?.values ?? []).map((kv) => [kv.key, anyValue(kv.value, depth + 1)]));
  if (has(v, "bytesValue")) return Buffer.from(v.bytesValue!).toString("base64");
  return null;
}

export function attributes(list: readonly PbKeyValue[] | undefined): Attributes {
  const m = new Map<string, AttrValue>();
  if (list) for (const kv of list) m.set(kv.key, anyValue(kv.value));
  return m;
}

const spanEvent = (e: PbEvent): OtlpSpanEvent => ({ name: e.name, timeMs: nanosToMs(e.timeUnixNano), attributes: attributes(e.attributes) });

/** An ExportTraceServiceRequest's spans, in the detail asked; MalformedExport when the bytes are not one. */
export function decodeProtobufExport(body: Uint8Array, detail: SpanDetail = "all"): OtlpSpan[] {
  let req: PbRequest;
  try {
    req = load().request.decode(body) as unknown as PbRequest;
  } catch (err) {
    throw new MalformedExport(`the body is not an OTLP ExportTraceServiceRequest (protobuf): ${(err as Error).message}`);
  }
  const all = detail === "all";
  const spans: OtlpSpan[] = [];
  for (const rs of req.resourceSpans) {
    const resource = all ? attributes(rs.resource?.attributes) : NO_ATTRIBUTES;
    for (const ss of rs.scopeSpans) {
      const scope = ss.scope?.name ?? "";
      for (const s of ss.spans) {
        spans.push({
          traceId: idHex(s.traceId, 16),
          spanId: idHex(s.spanId, 8),
          parentSpanId: idHex(s.parentSpanId, 8),
          name: s.name,
          startMs: nanosToMs(s.startTimeUnixNano),
          endMs: nanosToMs(s.endTimeUnixNano),
          attributes: all ? attributes(s.attributes) : NO_ATTRIBUTES,
          statusCode: s.status?.code ?? 0,
          statusMessage: s.status?.message ?? "",
          events: all ? s.events.map(spanEvent) : [],
          // Assigned either way: a conditional spread would build a throw-away object per span.
          links: all && s.links.length > 0 ? s.links.map((l) => ({ traceId: idHex(l.traceId, 16) || null, spanId: idHex(l.spanId, 8) || null, attributes: attributes(l.attributes) })) : undefined,
          resource,
          scope,
        });
      }
    }
  }
  return spans;
}

/** ExportTraceServiceResponse: empty on full success, partial_success when some spans were refused. */
export function encodeProtobufResponse(rejectedSpans: number, errorMessage: string): Uint8Array {
  const t = load().response;
  const body = rejectedSpans > 0 || errorMessage ? { partialSuccess: { rejectedSpans, errorMessage } } : {};
  return t.encode(t.fromObject(body)).finish();
}

type ExportResponse = { partialSuccess?: { rejectedSpans: number; errorMessage: string } };

/** Decodes an ExportTraceServiceResponse (tests read partial_success with it). */
export function decodeProtobufResponse(bytes: Uint8Array): ExportResponse {
  const t = load().response;
  return t.toObject(t.decode(bytes), { longs: Number }) as ExportResponse;
}

/** google.rpc.Status (an OTLP/HTTP error body, and the gRPC status details), with RetryInfo when a retry delay is given. */
export function encodeRpcStatus(code: number, message: string, retryAfterSeconds?: number): Uint8Array {
  const { status, retryInfo } = load();
  const details = retryAfterSeconds === undefined
    ? []
    : [{ typeUrl: "type.googleapis.com/google.rpc.RetryInfo", value: retryInfo.encode(retryInfo.fromObject({ retryDelay: { seconds: retryAfterSeconds } })).finish() }];
  return status.encode(status.fromObject({ code, message, details })).finish();
}

/** Decodes a google.rpc.Status (tests read error bodies and gRPC details with it). */
export function decodeRpcStatus(bytes: Uint8Array): { code: number; message: string; retryDelaySeconds?: number } {
  const { status, retryInfo } = load();
  const s = status.toObject(status.decode(bytes), { longs: Number }) as { code?: number; message?: string; details?: { typeUrl: string; value: Uint8Array }[] };
  const retry = s.details?.find((d) => d.typeUrl.endsWith("google.rpc.RetryInfo"));
  const delay = retry ? (retryInfo.toObject(retryInfo.decode(retry.value), { longs: Number }) as { retryDelay?: { seconds?: number } }).retryDelay?.seconds : undefined;
  return { code: s.code ?? 0, message: s.message ?? "", ...(delay !== undefined ? { retryDelaySeconds: delay } : {}) };
}

/**
 * Encodes an ExportTraceServiceRequest from its protobufjs object form (ids as bytes, times as numbers or
 * strings): what test fixtures and benchmarks send, as an exporter would.
 */
export function encodeProtobufExport(request: Record<string, unknown>): Uint8Array {
  const t = load().request;
  return t.encode(t.fromObject(request)).finish();
}

/** Loads the .proto files now (a decode thread does this at start, not on its first request). */
export const preloadProtobuf = (): void => void load();

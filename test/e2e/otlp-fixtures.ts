/** OTLP export bodies for tests and benchmarks, from short span descriptions: OTLP/JSON text or protobuf bytes. */
import { randomBytes } from "node:crypto";
import * as grpc from "@grpc/grpc-js";
import { TRACE_EXPORT_PATH } from "../../web/otlp/grpc-server.js";
import { encodeProtobufExport } from "../../otlp/otlp-protobuf.js";

export type AttrInput = string | number | boolean | readonly string[];
export interface SpanSpec {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly attributes?: Readonly<Record<string, AttrInput>>;
  /** Default: 50 ms before and at the time of encoding — give both when the same span is sent twice (a resend). */
  readonly startMs?: number;
  readonly endMs?: number;
  /** 2 = ERROR */
  readonly status?: { readonly code: number; readonly message?: string };
  readonly events?: readonly { readonly name: string; readonly attributes: Readonly<Record<string, AttrInput>> }[];
  readonly links?: readonly { readonly traceId: string; readonly spanId: string; readonly attributes?: Readonly<Record<string, AttrInput>> }[];
}

export const hexId = (bytes: 8 | 16): string => randomBytes(bytes).toString("hex");

const nanos = (ms: number): string => `${BigInt(Math.round(ms * 1000)) * 1000n}`;

function anyValue(v: AttrInput): Record<string, unknown> {
  if (typeof v === "string") return { stringValue: v };
  if (typeof v === "boolean") return { boolValue: v };
  if (typeof v === "number") return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  return { arrayValue: { values: v.map((x) => ({ stringValue: x })) } };
}
const keyValues = (attrs: Readonly<Record<string, AttrInput>> = {}) => Object.entries(attrs).map(([key, v]) => ({ key, value: anyValue(v) }));

/** The span in OTLP/JSON form (hex ids, int64 as strings). */
function jsonSpan(s: SpanSpec, now: number): Record<string, unknown> {
  return {
    traceId: s.traceId,
    spanId: s.spanId,
    ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
    name: s.name,
    kind: 1,
    startTimeUnixNano: nanos(s.startMs ?? now - 50),
    endTimeUnixNano: nanos(s.endMs ?? now),
    attributes: keyValues(s.attributes),
    events: (s.events ?? []).map((e) => ({ timeUnixNano: nanos(s.endMs ?? now), name: e.name, attributes: keyValues(e.attributes) })),
    status: s.status ?? {},
    ...(s.links ? { links: s.links.map((l) => ({ traceId: l.traceId, spanId: l.spanId, attributes: keyValues(l.attributes) })) } : {}),
  };
}

/** Resource attributes besides service.name (deployment.environment.name, service.version, …). */
export type ResourceAttributes = Readonly<Record<string, AttrInput>>;

function request(specs: readonly SpanSpec[], service: string, span: (s: SpanSpec) => Record<string, unknown>, resource: ResourceAttributes = {}) {
  return {
    resourceSpans: [{
      resource: { attributes: keyValues({ "service.name": service, ...resource }) },
      scopeSpans: [{ scope: { name: "runwatch-fixtures", version: "1" }, spans: specs.map(span) }],
    }],
  };
}

export function exportJson(specs: readonly SpanSpec[], service = "otlp-test", resource?: ResourceAttributes): string {
  const now = Date.now();
  return JSON.stringify(request(specs, service, (s) => jsonSpan(s, now), resource));
}

export function exportProtobuf(specs: readonly SpanSpec[], service = "otlp-test", resource?: ResourceAttributes): Uint8Array {
  const now = Date.now();
  const hex = (h: string | undefined) => (h ? Buffer.from(h, "hex") : undefined);
  return encodeProtobufExport(request(specs, service, (s) => {
    const j = jsonSpan(s, now);
    const links = (j.links as { traceId: string; spanId: string }[] | undefined)?.map((l) => ({ ...l, traceId: hex(l.traceId), spanId: hex(l.spanId) }));
    return { ...j, traceId: hex(s.traceId), spanId: hex(s.spanId), parentSpanId: hex(s.parentSpanId), ...(links ? { links } : {}) };
  }, resource));
}

/** A gRPC client of TraceService/Export that sends export bytes (as built above) with an optional Bearer key. */
export interface TraceExportClient {
  send(body: Uint8Array, key?: string): Promise<grpc.ServiceError | null>;
  close(): void;
}

export function traceExportClient(address: string): TraceExportClient {
  const bytes = (b: Buffer) => b;
  const Ctor = grpc.makeGenericClientConstructor({
    Export: { path: TRACE_EXPORT_PATH, requestStream: false, responseStream: false, requestSerialize: bytes, requestDeserialize: bytes, responseSerialize: bytes, responseDeserialize: bytes },
  }, "TraceService");
  const client = new Ctor(address, grpc.credentials.createInsecure(), { "grpc.max_send_message_length": 64 << 20 }) as unknown as grpc.Client & {
    Export(req: Buffer, md: grpc.Metadata, cb: (err: grpc.ServiceError | null) => void): void;
  };
  return {
    send(body, key) {
      const md = new grpc.Metadata();
      if (key) md.set("authorization", `Bearer ${key}`);
      return new Promise((resolve) => client.Export(Buffer.from(body), md, (err) => resolve(err)));
    },
    close: () => client.close(),
  };
}

/**
 * An export of `spans` minimal spans: traces of a root (an invoke_agent span of agent `agent`) and children, each
 * `perTrace` spans; `lastTrace` is the id of the trace stored last.
 */
export function minimalTracesExport(spans: number, perTrace: number, agent: string): { body: Uint8Array; lastTrace: string } {
  const out: SpanSpec[] = [];
  const t = Date.now() - 10_000;
  let lastTrace = "";
  for (let i = 0; i < spans / perTrace; i++) {
    const traceId = hexId(16);
    const root = hexId(8);
    lastTrace = traceId;
    for (let j = 1; j < perTrace; j++) out.push({ traceId, spanId: hexId(8), parentSpanId: root, name: `step ${j}`, startMs: t + j, endMs: t + j + 1 });
    out.push({ traceId, spanId: root, name: `invoke_agent ${agent}`, startMs: t, endMs: t + 20, attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent } });
  }
  return { body: exportProtobuf(out), lastTrace };
}

/**
 * One OTLP span as the mapping (mapping.ts) reads it, whatever the body's encoding: otlp-protobuf.ts and
 * otlp-json.ts both produce this. Ids are lowercase hex ("" when absent or malformed: the mapping refuses such a
 * span), times are Unix milliseconds, attribute values are plain JS values.
 */
import { needsRepair } from "../core/events/storable.js";

/** An attribute value: AnyValue as JS (int64 as a number; bytes as base64 text; kvlist as an object). */
export type AttrValue = string | number | boolean | null | readonly AttrValue[] | { readonly [key: string]: AttrValue };
/**
 * An attribute value as text: strings as they are, other scalars by String, lists and maps as JSON. Never a value's
 * own toString: a kvlist with a "toString" or "valueOf" key becomes an object whose conversion would throw.
 */
export function attrText(v: AttrValue): string {
  if (typeof v === "string") return v;
  if (v === null || typeof v !== "object") return String(v);
  return JSON.stringify(v);
}
/** Attributes by key. A Map: keys such as "__proto__" are data, never an object's prototype. */
export type Attributes = ReadonlyMap<string, AttrValue>;

/** The first of `keys` present (not null) in attrs. */
export function first(attrs: Attributes, keys: readonly string[]): AttrValue | undefined {
  for (const k of keys) {
    const v = attrs.get(k);
    if (v !== undefined && v !== null && v !== "") return v;
  }
  return undefined;
}

/**
 * A name used as an identifier (an agent, a session), cut to `max` without splitting a character; undefined when
 * empty or when it holds what an identifier may not (U+0000, a lone surrogate): a repaired name would name another.
 */
export function identifier(s: string | undefined, max: number): string | undefined {
  if (!s) return undefined;
  let id = s.length > max ? s.slice(0, max) : s;
  const last = id.charCodeAt(id.length - 1);
  if (s.length > max && last >= 0xd800 && last <= 0xdbff) id = id.slice(0, -1);
  return id && !needsRepair(id) ? id : undefined;
}

export interface OtlpSpanEvent {
  readonly name: string;
  readonly timeMs: number;
  readonly attributes: Attributes;
}

/** A link from a span to another span (maybe of another trace): a handoff, a batch, a retry. */
export interface OtlpSpanLink {
  /** Lowercase hex; null when malformed or absent (the link is left out). */
  readonly traceId: string | null;
  readonly spanId: string | null;
  readonly attributes: Attributes;
}

export const STATUS_ERROR = 2;

export interface OtlpSpan {
  /** null when malformed; "" when absent or all zeros. The mapping refuses a span without both ids. */
  readonly traceId: string | null;
  readonly spanId: string | null;
  /** "" for a root span; null when malformed (the span is refused). */
  readonly parentSpanId: string | null;
  readonly name: string;
  readonly startMs: number;
  readonly endMs: number;
  readonly attributes: Attributes;
  /** 0 unset, 1 ok, 2 error (STATUS_ERROR). */
  readonly statusCode: number;
  readonly statusMessage: string;
  readonly events: readonly OtlpSpanEvent[];
  /** Absent when the span has none (or the decoder was asked for "refusal" detail). */
  readonly links?: readonly OtlpSpanLink[] | undefined;
  /** The resource's attributes (shared by the spans of one ResourceSpans). */
  readonly resource: Attributes;
  /** The instrumentation scope's name, e.g. "openinference.instrumentation.langchain". */
  readonly scope: string;
}

/**
 * What a decoder makes of each span: everything, or only what tells whether a span can be taken at all (ids, times,
 * name; mapping.ts refusalOf), with no attributes, events or resource. A receiver that logs an export whole needs
 * no more: the pipeline decodes the export again, in full, to map it. The body is decoded whole either way.
 */
export type SpanDetail = "all" | "refusal";
export const NO_ATTRIBUTES: Attributes = new Map();

/** Why a body is not an OTLP export request at all (→ 400 / INVALID_ARGUMENT). */
export class MalformedExport extends Error {}

/** Hex of a trace id (16 bytes) or span id (8 bytes): "" when absent or all zeros (invalid per OTel), null when another length. */
export function idHex(bytes: Uint8Array | null | undefined, length: 8 | 16): string | null {
  // .length, not .byteLength: protobufjs leaves an unset bytes field at its default, an empty Array.
  if (!bytes || bytes.length === 0) return "";
  if (bytes.length !== length) return null;
  let any = 0;
  for (let i = 0; i < length; i++) any |= bytes[i]!;
  if (any === 0) return "";
  // protobufjs hands bytes fields over as Buffers on Node; a view is wrapped, not copied.
  return (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString("hex");
}

/**
 * Nanoseconds (a number, a numeric string or a protobufjs Long) → milliseconds; NaN when it is none of those.
 * Exact for strings and Longs: ~1.7e18 ns is past 2^53, and a double's rounding could put a span's end in the
 * millisecond before (its ISO time and derived event id are the floored milliseconds).
 */
export function nanosToMs(v: unknown): number {
  if (typeof v === "number") return v / 1e6;
  if (isLong(v)) {
    // fixed64, unsigned: high·2^32 + low ns = high·4294 ms + (high·967296 + low) ns, the latter exact below 2^53.
    const high = v.high >>> 0;
    const rest = high * 967_296 + (v.low >>> 0);
    return high * 4294 + Math.floor(rest / 1e6) + (rest % 1e6) / 1e6;
  }
  let ns: bigint;
  try {
    if (typeof v === "string") ns = BigInt(v.trim() === "" ? "x" : v.trim());
    else if (typeof v === "object" && v !== null && typeof (v as { toNumber?: unknown }).toNumber === "function") ns = BigInt(String(v));
    else return NaN;
  } catch {
    return NaN;
  }
  return Number(ns / 1_000_000n) + Number(ns % 1_000_000n) / 1e6;
}

const isLong = (v: unknown): v is { high: number; low: number } =>
  typeof v === "object" && v !== null && typeof (v as { high?: unknown }).high === "number" && typeof (v as { low?: unknown }).low === "number";

/** An int64 (number, numeric string or Long) as a JS number. */
export function int64(v: unknown): number {
  if (typeof v === "number") return v;
  if (typeof v === "string") return Number(v);
  if (typeof v === "object" && v !== null && typeof (v as { toNumber?: unknown }).toNumber === "function") {
    return (v as { toNumber(): number }).toNumber();
  }
  return NaN;
}

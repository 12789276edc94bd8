/**
 * A span's run labels (conventions.ts RUN_ATTRIBUTES, RESOURCE_ENVIRONMENT, RESOURCE_RELEASE) → the envelope fields of
 * its event (core/events/attributes.ts): tags, metadata, end_user, environment, release. The run folds them as it
 * folds an ingest event's (core/events/run-attributes.ts).
 *
 * An exporter cannot fix what it sent, so nothing here refuses a span: a value past a bound is cut to it (a tag or
 * metadata key to 200 characters, a metadata value to 1,024, the end user and release to 200, the environment to 100;
 * past 50 tags or 64 metadata keys on one span the rest are left out), a metadata value that is no string, number or
 * boolean is its JSON text, and an end user, environment or release that could not be stored as an identifier
 * (U+0000, a lone surrogate) is left out. What is built here passes the ingest schema (mapping.test.ts checks it).
 */
import {
  MAX_END_USER_CHARS, MAX_ENVIRONMENT_CHARS, MAX_METADATA_KEY_CHARS, MAX_METADATA_KEYS_PER_EVENT, MAX_METADATA_VALUE_CHARS,
  MAX_RELEASE_CHARS, MAX_TAG_CHARS, MAX_TAGS_PER_EVENT, type MetadataValue,
} from "../core/events/attributes.js";
import { cutText } from "../core/events/run-text.js";
import { RESOURCE_ENVIRONMENT, RESOURCE_RELEASE, RUN_ATTRIBUTES } from "./conventions.js";
import { attrText, first, identifier, type Attributes, type AttrValue, type OtlpSpan } from "./trace-model.js";

const isObj = (v: unknown): v is Record<string, AttrValue> => typeof v === "object" && v !== null && !Array.isArray(v);

/** JSON text parsed when it is an object or a list; undefined otherwise. */
function parsed(v: AttrValue): unknown {
  if (typeof v !== "string") return v;
  const c = v.charCodeAt(0);
  if (c !== 0x5b && c !== 0x7b) return v; // [ {
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
}

/** Tags from a list (or JSON text of one, or one tag as text), each cut, empty ones left out, at most 50. */
function tagsOf(v: AttrValue): string[] {
  const list = parsed(v);
  const out: string[] = [];
  for (const t of Array.isArray(list) ? list : [list]) {
    if (out.length >= MAX_TAGS_PER_EVENT) break;
    if (t === null || t === undefined) continue;
    const text = cutText(typeof t === "string" ? t : attrText(t as AttrValue), MAX_TAG_CHARS);
    if (text !== "") out.push(text);
  }
  return out;
}

/** A metadata value as the run keeps it: a scalar as it is (a string cut), anything else as its JSON text, cut. */
function metadataValue(v: unknown): MetadataValue | undefined {
  if (typeof v === "boolean") return v;
  if (typeof v === "number") return Number.isFinite(v) ? v : undefined;
  if (v === undefined || v === null) return undefined;
  return cutText(typeof v === "string" ? v : attrText(v as AttrValue), MAX_METADATA_VALUE_CHARS);
}

/** Adds a key's value to `out` (a null-prototype object), within the bounds; false once `out` is full. */
function put(out: Record<string, MetadataValue>, key: string, v: unknown): boolean {
  const k = cutText(key, MAX_METADATA_KEY_CHARS);
  const value = metadataValue(v);
  if (k === "" || value === undefined) return true;
  if (!(k in out) && Object.keys(out).length >= MAX_METADATA_KEYS_PER_EVENT) return false;
  out[k] = value;
  return true;
}

/** Metadata from the whole-object attributes and the per-key prefixed ones; undefined when the span has none. */
function metadataOf(attrs: Attributes): Record<string, MetadataValue> | undefined {
  let out: Record<string, MetadataValue> | undefined;
  const whole = first(attrs, RUN_ATTRIBUTES.metadata);
  const object = whole === undefined ? undefined : parsed(whole);
  if (isObj(object)) {
    out = Object.create(null) as Record<string, MetadataValue>;
    for (const k of Object.keys(object)) if (!put(out, k, object[k])) break;
  }
  for (const [key, v] of attrs) {
    // A look at the first character first: most attributes are neither prefix.
    const c = key.charCodeAt(0);
    if (c !== 0x61 && c !== 0x6c) continue; // a l
    const prefix = RUN_ATTRIBUTES.metadataPrefixes.find((p) => key.startsWith(p));
    if (prefix === undefined || key.length === prefix.length) continue;
    out ??= Object.create(null) as Record<string, MetadataValue>;
    if (!put(out, key.slice(prefix.length), v)) break;
  }
  return out;
}

const text = (attrs: Attributes, keys: readonly string[]): string | undefined => {
  const v = first(attrs, keys);
  return v === undefined ? undefined : attrText(v);
};

/** Sets the run labels the span (and its resource) carry on the span's event. */
export function addRunAttributes(event: Record<string, unknown>, span: OtlpSpan): void {
  const attrs = span.attributes;
  const tagValue = first(attrs, RUN_ATTRIBUTES.tags);
  if (tagValue !== undefined) {
    const tags = tagsOf(tagValue);
    if (tags.length > 0) event.tags = tags;
  }
  const metadata = metadataOf(attrs);
  if (metadata !== undefined && Object.keys(metadata).length > 0) event.metadata = metadata;
  const endUser = identifier(text(attrs, RUN_ATTRIBUTES.endUser), MAX_END_USER_CHARS);
  if (endUser) event.end_user = endUser;
  const environment = identifier(text(attrs, RUN_ATTRIBUTES.environment) ?? text(span.resource, RESOURCE_ENVIRONMENT), MAX_ENVIRONMENT_CHARS);
  if (environment) event.environment = environment;
  const release = identifier(text(attrs, RUN_ATTRIBUTES.release) ?? text(span.resource, RESOURCE_RELEASE), MAX_RELEASE_CHARS);
  if (release) event.release = release;
}

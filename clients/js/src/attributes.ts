/**
 * A run's attributes — tags, metadata, end user, environment, release (docs/API.md, the event envelope) — made to fit
 * the server's bounds before they are sent, so that a run is never refused because of them:
 * - a string over its bound is cut (a tag, a metadata key, endUser and release at 200 characters, environment at 100,
 *   a metadata value at 1024); an empty one is left out;
 * - past 50 tags or 64 metadata keys on a run, further ones are left out (the server keeps no more per run either);
 * - a metadata value that is not a string, a finite number or a boolean is sent JSON-encoded as a string; null and
 *   undefined are left out;
 * - a value of the wrong kind (a tag that is not a string, metadata that is not an object) is left out.
 * Like everything else in the client this never throws: each cut or left-out value is reported to onError (code
 * "invalid").
 */
import { safeStringify } from "./json.js";

export const MAX_TAGS = 50;
export const MAX_TAG_CHARS = 200;
export const MAX_METADATA_KEYS = 64;
export const MAX_KEY_CHARS = 200;
export const MAX_VALUE_CHARS = 1024;
export const MAX_END_USER_CHARS = 200;
export const MAX_ENVIRONMENT_CHARS = 100;
export const MAX_RELEASE_CHARS = 200;

export type MetadataValue = string | number | boolean;

/** What a run is described by (RunOptions), as the caller gives it. */
export interface RunAttributeOptions {
  /** Labels to find the run by (`tag:vip`): strings of up to 200 characters, at most 50 a run. */
  tags?: readonly string[];
  /** Flat key → string / number / boolean (`meta.customer:acme`): at most 64 keys a run; other values are JSON-encoded. */
  metadata?: Record<string, unknown>;
  /** Your agent's own user (not the Runwatch user whose key sends the run). */
  endUser?: string;
  /** e.g. "production", "staging". Default: the client's. */
  environment?: string;
  /** Your agent's version, e.g. "v1.2.3" or a commit. Default: the client's. */
  release?: string;
}

/** The envelope fields of one event, snake_case as on the wire. */
export interface WireAttributes {
  tags?: string[];
  metadata?: Record<string, MetadataValue>;
  end_user?: string;
  environment?: string;
  release?: string;
}

type Report = (message: string) => void;

function cut(text: string, max: number, what: string, report: Report): string {
  if (text.length <= max) return text;
  report(`${what} is ${text.length} characters long; cut to ${max}`);
  const out = text.slice(0, max);
  // Never half a surrogate pair: the server refuses a lone surrogate in end_user (an identifier).
  return /[\uD800-\uDBFF]$/.test(out) ? out.slice(0, -1) : out;
}

/** endUser, environment or release: a string (a number as its digits) cut to `max`; undefined when empty or not one. */
export function label(value: unknown, max: number, name: string, report: Report): string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value === "number" && Number.isFinite(value)) value = String(value);
  if (typeof value !== "string") {
    report(`${name} must be a string, not ${typeof value}; left out`);
    return undefined;
  }
  return cut(value, max, name, report);
}

/** The tags as the wire takes them: a single string is one tag; each cut to 200 characters; others left out. */
export function tagList(tags: unknown, report: Report): string[] {
  if (tags === undefined || tags === null) return [];
  const list: unknown = typeof tags === "string" ? [tags] : tags;
  if (!Array.isArray(list)) {
    report(`tags must be an array of strings, not ${typeof tags}; left out`);
    return [];
  }
  const out: string[] = [];
  list.forEach((tag: unknown, i) => {
    if (typeof tag !== "string") report(`tags[${i}] must be a string, not ${tag === null ? "null" : typeof tag}; left out`);
    else if (tag !== "") out.push(cut(tag, MAX_TAG_CHARS, `tag "${tag.slice(0, 40)}…"`, report));
  });
  return out;
}

function metadataValue(value: unknown, report: Report): MetadataValue {
  if (typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : String(value);
  const text = typeof value === "string" ? value : typeof value === "bigint" ? value.toString() : (safeStringify(value) ?? String(value));
  return cut(text, MAX_VALUE_CHARS, "a metadata value", report);
}

/** The metadata as the wire takes it (see metadataValue); keys cut to 200 characters, null and undefined left out. */
export function metadataRecord(metadata: unknown, report: Report): Record<string, MetadataValue> {
  const out: Record<string, MetadataValue> = Object.create(null); // a key "__proto__" is a key like another
  if (metadata === undefined || metadata === null) return out;
  if (typeof metadata !== "object" || Array.isArray(metadata)) {
    report(`metadata must be an object, not ${Array.isArray(metadata) ? "an array" : typeof metadata}; left out`);
    return out;
  }
  for (const [key, value] of Object.entries(metadata)) {
    if (key === "" || value === undefined || value === null) continue;
    out[cut(key, MAX_KEY_CHARS, `metadata key "${key.slice(0, 40)}…"`, report)] = metadataValue(value, report);
  }
  return out;
}

const some = (names: string[]): string =>
  names.slice(0, 5).map((n) => JSON.stringify(n)).join(", ") + (names.length > 5 ? ` and ${names.length - 5} more` : "");

/**
 * The tags and metadata one run has sent or will send, bounded as the server bounds a run, and the envelope fields not
 * sent yet (`pending`): they go with the run's next event (`takePending`).
 */
export class RunAttributes {
  readonly tags = new Set<string>();
  readonly metadata: Record<string, MetadataValue> = Object.create(null);
  pending: WireAttributes | undefined;

  constructor(
    private readonly sdkRunId: string,
    private readonly report: Report,
    o: RunAttributeOptions = {},
  ) {
    const labels: [keyof WireAttributes, string | undefined][] = [
      ["end_user", label(o.endUser, MAX_END_USER_CHARS, "endUser", report)],
      ["environment", label(o.environment, MAX_ENVIRONMENT_CHARS, "environment", report)],
      ["release", label(o.release, MAX_RELEASE_CHARS, "release", report)],
    ];
    for (const [field, value] of labels) if (value !== undefined) (this.pend() as Record<string, unknown>)[field] = value;
    this.addTags(tagList(o.tags, report));
    this.setMetadata(metadataRecord(o.metadata, report));
  }

  private pend(): WireAttributes {
    return (this.pending ??= {});
  }

  addTags(tags: readonly string[]): void {
    const leftOut: string[] = [];
    for (const tag of tags) {
      if (this.tags.has(tag)) continue;
      if (this.tags.size >= MAX_TAGS) {
        leftOut.push(tag);
        continue;
      }
      this.tags.add(tag);
      (this.pend().tags ??= []).push(tag);
    }
    if (leftOut.length > 0) this.report(`run ${this.sdkRunId} has ${MAX_TAGS} tags, the most a run keeps; left out: ${some(leftOut)}`);
  }

  setMetadata(metadata: Record<string, MetadataValue>): void {
    const leftOut: string[] = [];
    for (const [key, value] of Object.entries(metadata)) {
      if (!(key in this.metadata) && Object.keys(this.metadata).length >= MAX_METADATA_KEYS) {
        leftOut.push(key);
        continue;
      }
      this.metadata[key] = value;
      (this.pend().metadata ??= Object.create(null) as Record<string, MetadataValue>)[key] = value;
    }
    if (leftOut.length > 0) this.report(`run ${this.sdkRunId} has ${MAX_METADATA_KEYS} metadata keys, the most a run keeps; left out: ${some(leftOut)}`);
  }

  /** The envelope fields not sent yet (forgotten as they are taken). */
  takePending(): WireAttributes | undefined {
    const pending = this.pending;
    this.pending = undefined;
    return pending;
  }
}

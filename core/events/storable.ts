/**
 * What a storable value is: the one definition every receiver applies (POST /api/ingest, each item of
 * /api/ingest/batch, and any future receiver) before an event is acknowledged, and the pipeline applies again
 * when an operator replays a dead letter. docs/API.md ("Values that can be stored") states the same rules.
 *
 * Why: Postgres text cannot hold U+0000, ClickHouse's JSON parser refuses a lone UTF-16 surrogate escape, and
 * a value nested thousands deep or a multi-megabyte string costs every reader. An event acknowledged with one
 * of those used to fail in storage after the 202, so each case is decided here, before the acknowledgement:
 *
 * - U+0000 and lone surrogates in a string or an object key are **repaired** to U+FFFD (truncated LLM streams
 *   produce them; losing the event would be worse). In an identifier (sdk_run_id, agent_name, ... see
 *   IDENTIFIER_FIELDS) they are **rejected** (422): a repaired identifier would name another run or agent.
 * - Nesting deeper than MAX_DEPTH, a string longer than MAX_STRING_CHARS, or more than MAX_KEYS object keys in
 *   one event: rejected (422), naming the field.
 * Numbers, dates and counts are bounded by the event schema (core/events/schema.ts: SafeCount, Timestamp).
 */
import { ValidationError } from "../errors.js";

/** Containers (objects, arrays) may nest this deep, counting the event object itself as depth 1. */
export const MAX_DEPTH = 64;
/** Longest single string, in UTF-16 code units (what JavaScript's .length counts). */
export const MAX_STRING_CHARS = 1_048_576;
/** Most object keys in one event, summed over every object in it. */
export const MAX_KEYS = 10_000;
/** What U+0000 and lone surrogates become. */
export const REPLACEMENT = "\uFFFD";

/** Top-level fields that identify something: a bad character there is an error, not a repair. */
export const IDENTIFIER_FIELDS: ReadonlySet<string> = new Set([
  "event_type",
  "sdk_run_id",
  "agent_name",
  "event_id",
  "span_id",
  "parent_span_id",
  "session_id",
  "end_user",
  "environment",
  "release",
]);

const NUL = /\u0000/g;

/** True when `s` has U+0000 or a lone surrogate. */
export const needsRepair = (s: string): boolean => !s.isWellFormed() || s.includes("\u0000");

/** `s` with U+0000 and lone surrogates replaced by U+FFFD. */
export const repairString = (s: string): string => (needsRepair(s) ? s.toWellFormed().replace(NUL, REPLACEMENT) : s);

const describe = (path: string) => path || "body";

/** The refusals' words, shared with settings (core/storable-setting.ts): one rule, said one way. */
export const badTextMessage = (place: string) => `${place} must not contain U+0000 (NUL) or a lone UTF-16 surrogate`;
export const tooDeepMessage = (place: string) => `${place} nests deeper than ${MAX_DEPTH} levels`;

/**
 * Applies the rules to a parsed JSON value (an ingest event before its schema check). Returns the value to use
 * (the input itself when nothing needed repair; repaired copies of only the containers that changed) or throws
 * a ValidationError naming the field (a dotted path, array indexes as numbers: `payload.messages.3.content`).
 */
export function makeStorable<T>(value: T, options: { identifiers?: ReadonlySet<string> } = {}): T {
  const identifiers = options.identifiers ?? IDENTIFIER_FIELDS;
  let keys = 0;

  // The path of a value is kept as a chain and spelled out only for an error: joining it at every key was a
  // large part of the cost of checking an event. A value's own link is made only when it is a container with
  // children (a string's place is its parent's link and its key).
  const walk = (v: unknown, parent: Path | undefined, key: string | undefined, depth: number): unknown => {
    if (typeof v === "string") {
      if (v.length > MAX_STRING_CHARS) {
        const path = describe(pathText(link(parent, key)));
        throw new ValidationError({ field: path, message: `${path} is ${v.length} characters long; the most a string may hold is ${MAX_STRING_CHARS}` });
      }
      if (!needsRepair(v)) return v;
      if (depth === 2 && identifiers.has(key!)) {
        throw new ValidationError({ field: key!, message: badTextMessage(key!) });
      }
      return repairString(v);
    }
    if (typeof v !== "object" || v === null) return v;
    const at = link(parent, key);
    if (depth >= MAX_DEPTH) {
      const path = describe(pathText(at));
      throw new ValidationError({ field: path, message: tooDeepMessage(path) });
    }
    if (Array.isArray(v)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < v.length; i++) {
        const item = v[i];
        const next = walk(item, at, String(i), depth + 1);
        if (next !== item) (out ??= v.slice())[i] = next;
      }
      return out ?? v;
    }
    let out: Record<string, unknown> | undefined;
    const src = v as Record<string, unknown>;
    for (const k in src) {
      if (++keys > MAX_KEYS) {
        const path = describe(pathText(at));
        throw new ValidationError({ field: path, message: `the event has more than ${MAX_KEYS} object keys` });
      }
      const item = src[k];
      const badKey = needsRepair(k);
      const safeKey = badKey ? repairString(k) : k;
      const next = walk(item, at, safeKey, depth + 1);
      if (badKey || next !== item || out) {
        if (!out) {
          // Copy the keys before this one unchanged, then continue into the copy.
          out = {};
          for (const before in src) {
            if (before === k) break;
            Object.defineProperty(out, before, { value: src[before], enumerable: true, writable: true, configurable: true });
          }
        }
        // defineProperty, not assignment: a "__proto__" key from JSON.parse must stay a plain key.
        Object.defineProperty(out, safeKey, { value: next, enumerable: true, writable: true, configurable: true });
      }
    }
    return out ?? v;
  };

  return walk(value, undefined, undefined, 1) as T;
}

interface Path {
  readonly parent: Path | undefined;
  readonly key: string;
}
/** The link of the value at `key` under `parent`; none for the value walked first. */
const link = (parent: Path | undefined, key: string | undefined): Path | undefined => (key === undefined ? parent : { parent, key });
/** `payload.messages.3.content` */
function pathText(at: Path | undefined): string {
  const parts: string[] = [];
  for (let p = at; p; p = p.parent) parts.push(p.key);
  return parts.reverse().join(".");
}

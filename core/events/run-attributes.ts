/**
 * How a run's attributes follow its events (docs/API.md, "Tags, metadata, end user, environment, release"):
 * - tags: the union of every event's, kept sorted; past MAX_RUN_TAGS distinct tags further ones are dropped;
 * - metadata: the latest value of each key, as JSON text ("acme", 42, true) so that the type survives the
 *   Map(String, String) column; past MAX_RUN_METADATA_KEYS keys further new keys are dropped;
 * - end_user, environment, release: the latest non-empty value.
 * "Latest" is log order, as for the other fields events overwrite. The tags array and the metadata object are
 * replaced when they change, never changed in place: a part's frozen copies of its runs share them.
 */
import { MAX_RUN_METADATA_KEYS, MAX_RUN_TAGS, type MetadataValue, type RunAttributes } from "./attributes.js";
import type { RunRecord } from "./run.js";

type Attributed = Pick<RunRecord, "tags" | "metadata" | "end_user" | "environment" | "release">;

/** Folds the event's attributes into the run. Most events carry none: five property reads, nothing allocated. */
export function foldRunAttributes(run: Attributed, e: RunAttributes): void {
  if (e.tags !== undefined && e.tags.length > 0) run.tags = unionTags(run.tags, e.tags);
  if (e.metadata !== undefined) run.metadata = mergeMetadata(run.metadata, e.metadata);
  if (e.end_user) run.end_user = e.end_user;
  if (e.environment) run.environment = e.environment;
  if (e.release) run.release = e.release;
}

/** `current` (sorted, distinct) with `more` added, sorted, cut at MAX_RUN_TAGS; `current` itself when nothing is new. */
export function unionTags(current: readonly string[], more: readonly string[]): readonly string[] {
  let next: Set<string> | undefined;
  for (const t of more) {
    if (t === "" || (next ? next.has(t) : current.includes(t))) continue;
    if ((next?.size ?? current.length) >= MAX_RUN_TAGS) break;
    (next ??= new Set(current)).add(t);
  }
  return next === undefined ? current : [...next].sort(byCodeUnits);
}

/** Sorted as ClickHouse compares strings (bytes; for UTF-16 code units the same order but for surrogate pairs). */
const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * `current` with each key of `more` set to its value's JSON, cut at MAX_RUN_METADATA_KEYS keys; `current` itself when
 * nothing changed. Null-prototype objects: a key such as "__proto__" is a plain key.
 */
export function mergeMetadata(current: Readonly<Record<string, string>>, more: Readonly<Record<string, MetadataValue>>): Readonly<Record<string, string>> {
  let next: Record<string, string> | undefined;
  let size = -1;
  for (const k in more) {
    const v = more[k];
    if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") continue;
    const json = JSON.stringify(v);
    const had = Object.hasOwn(next ?? current, k);
    if (had && (next ?? current)[k] === json) continue;
    if (!had) {
      if (size < 0) size = Object.keys(current).length;
      if (size >= MAX_RUN_METADATA_KEYS) continue;
      size++;
    }
    next ??= Object.assign(Object.create(null) as Record<string, string>, current);
    next[k] = json;
  }
  return next ?? current;
}

/** The run's metadata as the client sent it: each value's JSON decoded (a value that is not JSON stays text). */
export function decodeMetadata(m: Readonly<Record<string, string>>): Record<string, MetadataValue> {
  const out: Record<string, MetadataValue> = Object.create(null);
  for (const k in m) {
    const text = m[k]!;
    let v: unknown = text;
    try {
      v = JSON.parse(text);
    } catch {
      // Written by something else than the pipeline: keep the text.
    }
    out[k] = typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? v : text;
  }
  return out;
}

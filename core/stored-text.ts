/**
 * Text Postgres cannot store: U+0000 (text and jsonb refuse it) and lone UTF-16 surrogates (jsonb refuses their
 * escapes). Ingested content repairs them (core/events/storable.ts: losing an event would be worse); what a member
 * writes as a setting — an evaluator, a rule's filter, a queue's score configs, a schema — refuses them, naming the
 * place, because a silently changed setting would match or judge other text than the one written.
 */
import { ValidationError } from "./errors.js";
import { needsRepair, repairString } from "./events/storable.js";

/**
 * The place of the first bad key or string in `value`, spelled from `root` (`score_configs[1].categories[0]`; `root`,
 * or `body` when it is empty, for the value itself).
 */
export function unstorableTextAt(value: unknown, root = ""): string | undefined {
  // A stack, not recursion: a 64 KiB body may nest thousands deep.
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length > 0) {
    const [v, place] = stack.pop()!;
    if (typeof v === "string") {
      if (needsRepair(v)) return place || "body";
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${place}[${i}]`]);
    } else if (typeof v === "object" && v !== null) {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, item] = entries[i]!;
        const at = place ? `${place}.${repairString(key)}` : repairString(key);
        if (needsRepair(key)) return at;
        stack.push([item, at]);
      }
    }
  }
  return undefined;
}

/** Throws a ValidationError naming the first key or string in `value` (spelled from `root`) that Postgres cannot store. */
export function refuseUnstorableText(value: unknown, root = ""): void {
  const at = unstorableTextAt(value, root);
  if (at) throw new ValidationError({ field: at, message: `${at} must not contain U+0000 (NUL) or a lone UTF-16 surrogate` });
}

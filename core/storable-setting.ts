/**
 * What a setting may hold to be stored: what a member writes as a setting — an evaluator, a rule's filter, a queue's
 * score configs, an agent config, a schema — is refused, with its place named, when it holds
 *
 * - U+0000 or a lone UTF-16 surrogate in a key or a string: Postgres's text and jsonb refuse them. Ingested content
 *   repairs them instead (core/events/storable.ts: losing an event would be worse); a silently changed setting would
 *   match or judge other text than the one written.
 * - containers nested deeper than MAX_DEPTH (the value itself is level 1, as for events): JSON.stringify overflows
 *   the call stack a few thousand levels down, and no setting needs more than a few.
 */
import { ValidationError } from "./errors.js";
import { badTextMessage, MAX_DEPTH, needsRepair, repairString, tooDeepMessage } from "./events/storable.js";

export interface SettingProblem {
  /** `score_configs[1].categories[0]`, spelled from the root; the root, or `body` when it is empty, for the value itself. */
  readonly place: string;
  readonly message: string;
}

/** The first reason `value` cannot be stored as a setting, or undefined. */
export function settingProblem(value: unknown, root = ""): SettingProblem | undefined {
  const named = (place: string) => place || "body";
  const badText = (place: string): SettingProblem => ({ place, message: badTextMessage(place) });
  // A stack, not recursion: a 64 KiB body may nest thousands deep.
  const stack: [unknown, string, number][] = [[value, root, 1]];
  while (stack.length > 0) {
    const [v, place, depth] = stack.pop()!;
    if (typeof v === "string") {
      if (needsRepair(v)) return badText(named(place));
      continue;
    }
    if (typeof v !== "object" || v === null) continue;
    if (depth >= MAX_DEPTH) return { place: named(place), message: tooDeepMessage(named(place)) };
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${place}[${i}]`, depth + 1]);
      continue;
    }
    const entries = Object.entries(v);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, item] = entries[i]!;
      const at = place ? `${place}.${repairString(key)}` : repairString(key);
      if (needsRepair(key)) return badText(at);
      stack.push([item, at, depth + 1]);
    }
  }
  return undefined;
}

/** Throws a ValidationError naming the first place in `value` (spelled from `root`) that cannot be stored as a setting. */
export function refuseUnstorableSetting(value: unknown, root = ""): void {
  const problem = settingProblem(value, root);
  if (problem) throw new ValidationError({ field: problem.place, message: problem.message });
}

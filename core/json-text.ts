/**
 * JSON text for the rows and frames the pipeline writes by hand, one value at a time. Each JSON.stringify call costs
 * more before it looks at its value than the short ids, names and times it mostly quotes (docs/BENCHMARKS.md, "Pipeline
 * thread, per span"): these quote a string that needs no escaping as it is, and hand anything else to JSON.stringify,
 * so the text is always what JSON.stringify would write.
 */

/** Strings whose JSON is the string in quotes: letters, digits, `_`, `-`, `:`, `.`, space (ids, UUIDs, ISO times, names). */
const PLAIN = /^[\w\-:. ]*$/;

/** `JSON.stringify(s)`; typed for strings, and still exact for another value a foreign record may hold. */
export const jsonString = (s: string): string => (typeof s === "string" && PLAIN.test(s) ? `"${s}"` : JSON.stringify(s));

/** What JSON.stringify writes for `v` as an array's element (undefined, functions and symbols: null). */
export function jsonValue(v: unknown): string {
  if (typeof v === "string") return jsonString(v);
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : "null";
  if (v === null || v === undefined) return "null";
  return JSON.stringify(v) ?? "null";
}

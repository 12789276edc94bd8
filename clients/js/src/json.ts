/** JSON helpers that never throw: agents hand us arbitrary values (cycles, bigints, class instances, errors). */

export const PREVIEW_MAX_CHARS = 500;

/** JSON.stringify that survives cycles, bigint, functions and symbols; undefined only for undefined input. */
export function safeStringify(value: unknown): string | undefined {
  const seen = new WeakSet<object>();
  try {
    return JSON.stringify(value, function (this: unknown, _key, v: unknown) {
      if (typeof v === "bigint") return v.toString();
      if (typeof v === "function" || typeof v === "symbol") return undefined;
      if (v instanceof Error) return { name: v.name, message: v.message };
      if (v instanceof Map) return Object.fromEntries(v);
      if (v instanceof Set) return [...v];
      if (v !== null && typeof v === "object") {
        if (seen.has(v)) return "[Circular]";
        seen.add(v);
      }
      return v;
    });
  } catch (err) {
    return JSON.stringify(`[unserializable: ${(err as Error)?.message ?? String(err)}]`);
  }
}

/** A JSON-safe copy of a value (what the server will store). */
export function toJson(value: unknown): unknown {
  if (value === undefined) return undefined;
  const s = safeStringify(value);
  return s === undefined ? undefined : JSON.parse(s);
}

/** docs/API.md types input/output/context as objects: plain objects pass through, anything else is wrapped. */
export function toJsonObject(value: unknown): Record<string, unknown> | undefined {
  const v = toJson(value);
  if (v === undefined) return undefined;
  if (v !== null && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
  return { value: v };
}

/** A short human-readable rendering: strings as they are, anything else as JSON, cut to `max` characters. */
export function preview(value: unknown, max: number = PREVIEW_MAX_CHARS): string {
  const s = typeof value === "string" ? value : (safeStringify(value) ?? "");
  return truncate(s, max);
}

export function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  return s.slice(0, Math.max(0, max - 1)) + "…";
}

/** error payload fields (docs/API.md: error_type, error_message, traceback) from anything thrown. */
export function errorPayload(err: unknown): { error_type: string; error_message: string; traceback?: string } {
  if (err instanceof Error || (err !== null && typeof err === "object" && "message" in err)) {
    const e = err as Error;
    return {
      error_type: (e.name || e.constructor?.name || "Error").slice(0, 200),
      error_message: String(e.message ?? ""),
      traceback: typeof e.stack === "string" ? e.stack : undefined,
    };
  }
  return { error_type: typeof err, error_message: preview(err, 4000) };
}

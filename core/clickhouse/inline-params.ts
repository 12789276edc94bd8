/**
 * {name:Type} placeholders written into the SQL as typed literals, for chDB. libchdb runs parameterised queries one at
 * a time per process (its parameter state is process-wide; chdb chains them), while plain queries run side by side:
 * with every query bound, one tenant's slow read (a run of 20,000 spans) queued every other tenant's queries behind
 * it. A query whose literals are small goes as plain SQL instead; a big one (a pipeline look-up of thousands of ids)
 * stays bound, since a long query text costs parsing and may pass the engine's max_query_size.
 *
 * Each value becomes a single-quoted string literal — `\` and `'` escaped (the two characters that could end it),
 * and control characters for a clean round trip — or NULL, or an array of those, and is CAST to the placeholder's
 * type: the engine parses it from text as it parses a bound parameter, and refuses what does not fit the type.
 */

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*):([^{}]+)\}/g;

/** The longest query text written out with literals; longer ones stay bound. */
export const MAX_INLINE_CHARS = 64 * 1024;

const ESCAPES: Record<string, string> = { "\\": "\\\\", "'": "\\'", "\0": "\\0", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t" };
const ESCAPED = /[\\'\0\b\f\n\r\t]/g;

export const quoteString = (s: string): string => `'${s.replace(ESCAPED, (c) => ESCAPES[c]!)}'`;

/**
 * The value as a literal of at most `room` characters, or undefined for a value that has none here or needs more (then
 * the query stays bound): a look-up of thousands of ids is not written out only to be found too long.
 */
function literal(v: unknown, room: number): string | undefined {
  let l: string | undefined;
  if (typeof v === "string") l = v.length + 2 <= room ? quoteString(v) : undefined;
  else if (typeof v === "number") l = Number.isFinite(v) ? quoteString(String(v)) : undefined;
  else if (typeof v === "bigint") l = quoteString(v.toString());
  else if (typeof v === "boolean") l = v ? "'1'" : "'0'";
  else if (v === null) l = "NULL";
  else if (Array.isArray(v)) {
    const items: string[] = [];
    let size = 2;
    for (const x of v) {
      const item = literal(x, room - size);
      if (item === undefined || item === "NULL" || item.startsWith("[")) return undefined;
      items.push(item);
      size += item.length + 1;
    }
    l = `[${items.join(",")}]`;
  }
  return l !== undefined && l.length <= room ? l : undefined;
}

/** `sql` with its placeholders written as literals, or undefined when it should stay bound. */
export function inlineParams(sql: string, params: Readonly<Record<string, unknown>>): string | undefined {
  let ok = true;
  let size = sql.length;
  const out = sql.replace(PLACEHOLDER, (whole, name: string, type: string) => {
    if (!ok) return whole;
    const l = Object.hasOwn(params, name) ? literal(params[name], MAX_INLINE_CHARS - size) : undefined;
    size += (l?.length ?? 0) + type.length;
    if (l === undefined || size > MAX_INLINE_CHARS) {
      ok = false;
      return whole;
    }
    return `CAST(${l} AS ${type})`;
  });
  return ok ? out : undefined;
}

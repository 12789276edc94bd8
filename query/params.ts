/**
 * A query's `params`: checked, then written into the query's canonical text (query/run.ts) as typed literals,
 * `CAST('<value>' AS <the placeholder's type>)` — the engine parses the text by the type, as it parses a bound
 * parameter, and refuses what does not fit. Written in rather than bound, so that the query that runs is text the
 * checker saw whole (it checks the result again), and so that a slow query holds no process-wide binding (chDB runs
 * bound queries one at a time: core/clickhouse/inline-params.ts).
 */
import { quoteString } from "../core/clickhouse/inline-params.js";
import { QueryRefused } from "./types.js";

export const MAX_PARAMS = 64;
export const MAX_PARAM_ITEMS = 1_000;
export const MAX_PARAM_CHARS = 16 * 1024;
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

const refuse = (message: string) => new QueryRefused({ field: "params", message });

/** A scalar's literal, or undefined for a value params may not hold. */
function scalar(v: unknown): string | undefined {
  if (typeof v === "string") return v.length <= MAX_PARAM_CHARS ? quoteString(v) : undefined;
  if (typeof v === "number") return Number.isFinite(v) ? quoteString(String(v)) : undefined;
  if (typeof v === "boolean") return v ? "'1'" : "'0'";
  return undefined;
}

/** Each param's literal text by name; refuses a bad name or value (field "params"). */
export function paramLiterals(params: Readonly<Record<string, unknown>> | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (params === undefined) return out;
  if (typeof params !== "object" || params === null || Array.isArray(params)) throw refuse("params must be an object of name → value");
  const names = Object.keys(params);
  if (names.length > MAX_PARAMS) throw refuse(`params may hold at most ${MAX_PARAMS} values`);
  for (const name of names) {
    if (!NAME.test(name)) throw refuse(`params: ${JSON.stringify(name.slice(0, 80))} is not a parameter name (letters, digits and _, not starting with a digit, at most 64)`);
    const v = params[name];
    let literal: string | undefined;
    if (Array.isArray(v)) {
      if (v.length > MAX_PARAM_ITEMS) throw refuse(`params.${name}: at most ${MAX_PARAM_ITEMS} items`);
      const items = v.map(scalar);
      literal = items.every((i) => i !== undefined) ? `[${items.join(", ")}]` : undefined;
    } else {
      literal = scalar(v);
    }
    if (literal === undefined) {
      throw refuse(`params.${name} must be a string (at most ${MAX_PARAM_CHARS} characters), a finite number, a boolean, or an array of those`);
    }
    out.set(name, literal);
  }
  return out;
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*):([^{}]+)\}/y;

/**
 * `sql` (the engine's canonical text of the query: formatQuery) with each `{name:Type}` outside string literals and
 * quoted names written as `CAST(<literal> AS Type)`. Refuses a placeholder without a value and a value no placeholder
 * names. Returns the text and whether it wrote any.
 */
export function writeParams(sql: string, literals: ReadonlyMap<string, string>): string {
  const used = new Set<string>();
  let out = "";
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i]!;
    if (ch === "'" || ch === "`" || ch === '"') {
      const end = quotedEnd(sql, i, ch);
      out += sql.slice(i, end);
      i = end;
      continue;
    }
    if (ch === "{") {
      PLACEHOLDER.lastIndex = i;
      const m = PLACEHOLDER.exec(sql);
      if (m) {
        const literal = literals.get(m[1]!);
        if (literal === undefined) throw refuse(`the query names {${m[1]}:${m[2]}} but params has no ${m[1]}`);
        used.add(m[1]!);
        out += `CAST(${literal} AS ${m[2]})`;
        i += m[0].length;
        continue;
      }
    }
    out += ch;
    i++;
  }
  for (const name of literals.keys()) if (!used.has(name)) throw refuse(`params.${name} is not used: the query has no {${name}:Type} placeholder`);
  return out;
}

/** The index after the quoted text that opens at `start` (backslash escapes; a doubled quote is one quote). */
function quotedEnd(sql: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === "\\") i += 2;
    else if (sql[i] === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else i++;
  }
  return sql.length;
}

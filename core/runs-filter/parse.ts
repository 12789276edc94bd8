/**
 * The string form → RunsFilter. Tokens (tokens.ts) are read one by one into the filter; a token that cannot be
 * read is a ValidationError (field `filter`) naming it and why. The fields, their operators and values are listed
 * in docs/EXPLORER.md.
 */
import { RUN_STATUSES } from "../events/schema.js";
import { isFilterValue, MAX_LIST_VALUES, MAX_VALUE_CHARS, SINCE_PATTERN, type MetadataCondition, type RunsFilter } from "./schema.js";
import { filterError, shapeOf, shown, tokenize, valueItems, valueText, type FieldToken } from "./tokens.js";
import { readDate, readDuration, readNumber } from "./values.js";

type Draft = { -readonly [K in keyof RunsFilter]: RunsFilter[K] extends readonly (infer T)[] | undefined ? T[] : RunsFilter[K] };
type RangeDraft = { min?: number; max?: number; min_exclusive?: true; max_exclusive?: true };
type Reader = (t: FieldToken, f: Draft) => void;

/** A value checked against the bounds of values. */
function checked(t: FieldToken, s: string): string {
  if (s.length > MAX_VALUE_CHARS) throw filterError(`a value is over ${MAX_VALUE_CHARS} characters in ${shown(t.raw)}`);
  if (!isFilterValue(s)) throw filterError(`${t.field} needs a value without control characters: ${shown(t.raw)}`);
  return s;
}

function only(t: FieldToken, ...ops: FieldToken["op"][]): void {
  if (!ops.includes(t.op)) throw filterError(`${t.field} takes ${ops.map((o) => `${t.field}${o}`).join(" or ")}, not ${t.op}: ${shown(t.raw)}`);
}
function notNegated(t: FieldToken): void {
  if (t.negated) throw filterError(`${t.field} cannot be negated: ${shown(t.raw)}`);
}
function unset(t: FieldToken, present: unknown): void {
  if (present !== undefined) throw filterError(`${t.field} is given twice: ${shown(t.raw)}`);
}
function noKey(t: FieldToken): void {
  if (t.key !== undefined) throw filterError(`unknown field "${t.field}.${t.key}" in ${shown(t.raw)}`);
}

/** The value as one string (`user:a,b` is the user "a,b"). */
function single(t: FieldToken): { text: string; quoted: boolean } {
  const v = valueText(t.value);
  if (v.text === "" && !v.quoted) throw filterError(`${t.field} needs a value: ${shown(t.raw)}`);
  return { text: checked(t, v.text), quoted: v.quoted };
}

/** The value as a comma-separated list. */
function list(t: FieldToken): string[] {
  const items = valueItems(t.value);
  if (items.length > MAX_LIST_VALUES) throw filterError(`${t.field} takes at most ${MAX_LIST_VALUES} values: ${shown(t.raw)}`);
  return items.map((i) => {
    if (i.text === "" && !i.quoted) throw filterError(`${t.field} needs a value${items.length > 1 ? " between the commas" : ""}: ${shown(t.raw)}`);
    return checked(t, i.text);
  });
}

/** `field:a,b` adds to `pos`, `-field:a,b` (or `field!=a,b`) to `neg`. */
const listField = (pos: keyof Draft, neg: keyof Draft, allowed?: readonly string[]): Reader => (t, f) => {
  noKey(t);
  only(t, ":", "!=");
  const values = list(t);
  if (allowed) {
    for (const v of values) if (!allowed.includes(v)) throw filterError(`${t.field} must be one of ${allowed.join(", ")}: ${shown(t.raw)}`);
  }
  const key = t.negated !== (t.op === "!=") ? neg : pos;
  ((f[key] as string[] | undefined) ??= []).push(...values);
  if ((f[key] as string[]).length > MAX_LIST_VALUES) throw filterError(`${t.field} takes at most ${MAX_LIST_VALUES} values: ${shown(t.raw)}`);
};

/** A field with one value, given once. */
const singleField = (key: "end_user" | "session" | "id_prefix"): Reader => (t, f) => {
  noKey(t);
  notNegated(t);
  only(t, ":");
  unset(t, f[key]);
  f[key] = single(t).text;
};

/** Adds a bound to a range: `:` sets both, `>`/`>=` the lower, `<`/`<=` the upper; each at most once. */
function bound(t: FieldToken, r: RangeDraft, n: number): void {
  notNegated(t);
  if (t.op === "!=") throw filterError(`${t.field} takes :, >, >=, < or <=, not !=: ${shown(t.raw)}`);
  const lower = t.op === ":" || t.op[0] === ">";
  const upper = t.op === ":" || t.op[0] === "<";
  if ((lower && r.min !== undefined) || (upper && r.max !== undefined)) throw filterError(`${t.field} has that bound twice: ${shown(t.raw)}`);
  if (lower) (r.min = n), t.op === ">" && (r.min_exclusive = true);
  if (upper) (r.max = n), t.op === "<" && (r.max_exclusive = true);
}

const rangeField = (key: "cost" | "tokens" | "duration_ms", read: (s: string) => number | undefined, what: string): Reader => (t, f) => {
  noKey(t);
  const raw = single(t).text;
  const n = read(key === "cost" && raw.startsWith("$") ? raw.slice(1) : raw);
  if (n === undefined) throw filterError(`${t.field} needs ${what}: ${shown(t.raw)}`);
  bound(t, ((f[key] as RangeDraft | undefined) ??= {}), n);
};

function metadata(t: FieldToken, f: Draft): void {
  if (!t.key) throw filterError(`meta needs a key, as in meta.customer:acme: ${shown(t.raw)}`);
  const key = checked(t, t.key);
  const v = single(t);
  let c: MetadataCondition;
  if (t.op === ":" && v.text === "*" && !v.quoted) c = { key, op: t.negated ? "not_exists" : "exists" };
  else if (t.op === ":" || t.op === "!=") c = { key, op: t.negated !== (t.op === "!=") ? "!=" : "=", value: v.text };
  else {
    if (t.negated) throw filterError(`a comparison cannot be negated; write the opposite one: ${shown(t.raw)}`);
    const n = readNumber(v.text);
    if (n === undefined) throw filterError(`meta.${t.key}${t.op} needs a number: ${shown(t.raw)}`);
    c = { key, op: t.op, value: n };
  }
  (f.metadata ??= []).push(c);
  if (f.metadata.length > MAX_LIST_VALUES) throw filterError(`at most ${MAX_LIST_VALUES} metadata conditions: ${shown(t.raw)}`);
}

function score(t: FieldToken, f: Draft): void {
  if (!t.key) throw filterError(`score needs a name, as in score.correctness<0.5: ${shown(t.raw)}`);
  const name = checked(t, t.key);
  const scores = (f.score ??= []);
  let entry = scores.find((s) => s.name === name) as ({ name: string } & RangeDraft) | undefined;
  if (!entry) scores.push((entry = { name }));
  const v = single(t);
  if (t.op === ":" && v.text === "*" && !v.quoted) return notNegated(t);
  const n = readNumber(v.text);
  if (n === undefined) throw filterError(`score.${t.key} needs a number or *: ${shown(t.raw)}`);
  bound(t, entry, n);
}

function tag(t: FieldToken, f: Draft): void {
  noKey(t);
  only(t, ":", "!=");
  const tags = list(t);
  if (t.negated !== (t.op === "!=")) (f.tags_none ??= []).push(...tags);
  else if (tags.length === 1) (f.tags_all ??= []).push(tags[0]!);
  else {
    if (f.tags_any) throw filterError(`one tag:a,b list per filter (repeat tag: to require each tag): ${shown(t.raw)}`);
    f.tags_any = tags;
  }
  for (const k of ["tags_none", "tags_all"] as const) {
    if ((f[k]?.length ?? 0) > MAX_LIST_VALUES) throw filterError(`at most ${MAX_LIST_VALUES} tags: ${shown(t.raw)}`);
  }
}

function time(key: "from" | "to"): Reader {
  return (t, f) => {
    noKey(t);
    notNegated(t);
    only(t, ":");
    unset(t, f[key]);
    const iso = readDate(single(t).text);
    if (iso === undefined) throw filterError(`${key} needs a date like 2026-01-02 or 2026-01-02T10:00Z (UTC unless it names a zone), between 1970 and 2200: ${shown(t.raw)}`);
    f[key] = iso;
  };
}

const READERS: Readonly<Record<string, Reader>> = {
  status: listField("status", "status_not", RUN_STATUSES),
  agent: listField("agent", "agent_not"),
  model: listField("model", "model_not"),
  env: listField("environment", "environment_not"),
  release: listField("release", "release_not"),
  tag,
  meta: metadata,
  score,
  user: singleField("end_user"),
  session: singleField("session"),
  id: singleField("id_prefix"),
  version: (t, f) => {
    noKey(t);
    notNegated(t);
    only(t, ":");
    unset(t, f.config_version);
    const n = readNumber(single(t).text);
    if (n === undefined || !Number.isInteger(n) || n < 1 || n > 2 ** 31 - 1) throw filterError(`version needs a whole number from 1: ${shown(t.raw)}`);
    f.config_version = n;
  },
  cost: rangeField("cost", readNumber, "a number"),
  tokens: rangeField("tokens", readNumber, "a number"),
  duration: rangeField("duration_ms", readDuration, "a duration like 500ms, 10s, 2m or 1h"),
  has: (t, f) => {
    noKey(t);
    only(t, ":");
    unset(t, f.has_error);
    if (single(t).text.toLowerCase() !== "error") throw filterError(`has takes has:error: ${shown(t.raw)}`);
    f.has_error = !t.negated;
  },
  is: (t, f) => {
    noKey(t);
    notNegated(t);
    only(t, ":");
    for (const v of list(t)) {
      const what = v.toLowerCase();
      if (what === "experiment") f.include_experiments = true;
      else if (what === "judge") f.include_judge = true;
      else throw filterError(`is takes is:experiment or is:judge: ${shown(t.raw)}`);
    }
  },
  since: (t, f) => {
    noKey(t);
    notNegated(t);
    only(t, ":");
    unset(t, f.since);
    const v = single(t).text;
    if (!SINCE_PATTERN.test(v)) throw filterError(`since needs a duration like 15m, 24h, 7d or 2w (for a date, from:): ${shown(t.raw)}`);
    f.since = v;
  },
  from: time("from"),
  to: time("to"),
};
/** Other names a field answers to. */
const ALIASES: Readonly<Record<string, string>> = { environment: "env", end_user: "user", tags: "tag", metadata: "meta", config_version: "version" };

export const FILTER_FIELDS: readonly string[] = Object.keys(READERS);

/** The string form → a RunsFilter (`{}` for an empty string); a ValidationError (field `filter`) naming the bad token. */
export function parseRunsFilter(input: string): RunsFilter {
  const f: Draft = {};
  for (const token of tokenize(input)) {
    const shape = shapeOf(token);
    if (!("field" in shape)) {
      if (shape.text === "") continue; // `""`: nothing to look for
      const text = shape.text;
      if (!isFilterValue(text)) throw filterError(`free text must be at most ${MAX_VALUE_CHARS} characters, without control characters: ${shown(token.raw)}`);
      ((shape.negated ? (f.text_not ??= []) : (f.text ??= [])) as string[]).push(text);
      continue;
    }
    const reader = READERS[ALIASES[shape.field] ?? shape.field];
    if (!reader) throw filterError(`unknown field "${shape.field}" in ${shown(token.raw)}; fields: ${FILTER_FIELDS.join(", ")}`);
    reader(shape, f);
  }
  return f as RunsFilter;
}

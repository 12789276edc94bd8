/**
 * The string form's lexical level: whitespace-separated tokens, each a run of bare and "quoted" segments
 * (`agent:"refund bot"`, `meta."my key":x`), and a token's shape — an optional leading `-`, a field, an operator
 * and a value — or free text. One pass over at most MAX_FILTER_CHARS characters: the work is bounded whatever the
 * input.
 */
import { ValidationError } from "../errors.js";
import { MAX_FILTER_CHARS, MAX_FILTER_TOKENS } from "./schema.js";

export interface Segment {
  readonly text: string;
  readonly quoted: boolean;
}

export interface Token {
  /** The token as typed, for messages. */
  readonly raw: string;
  readonly segments: readonly Segment[];
}

export type Operator = ":" | "!=" | ">" | "<" | ">=" | "<=";

/** A token split at its operator: `-meta."my key"!=x` → negated, field meta, key "my key", `!=`, value segments. */
export interface FieldToken {
  readonly raw: string;
  readonly negated: boolean;
  /** Lower-cased. */
  readonly field: string;
  /** What follows `field.` (meta.<key>, score.<name>), quotes removed. */
  readonly key?: string;
  readonly op: Operator;
  readonly value: readonly Segment[];
}

export interface TextToken {
  readonly raw: string;
  readonly negated: boolean;
  readonly text: string;
}

/** The filter's ValidationError: field `filter`, the message naming the token (cut to 80 characters) and why. */
export function filterError(message: string): ValidationError {
  return new ValidationError({ message, field: "filter" });
}
export const shown = (raw: string): string => JSON.stringify(raw.length > 80 ? `${raw.slice(0, 80)}…` : raw);

const isSpace = (c: string): boolean => /\s/.test(c);

export function tokenize(input: string): Token[] {
  if (input.length > MAX_FILTER_CHARS) throw filterError(`the filter is ${input.length} characters long; at most ${MAX_FILTER_CHARS}`);
  if (!input.isWellFormed()) throw filterError("the filter holds a broken character (a lone UTF-16 surrogate)");
  const control = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.exec(input);
  if (control) throw filterError(`the filter holds a control character (U+${control[0].charCodeAt(0).toString(16).padStart(4, "0").toUpperCase()}) at position ${control.index}`);
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    if (isSpace(input[i]!)) {
      i++;
      continue;
    }
    const start = i;
    const segments: Segment[] = [];
    while (i < input.length && !isSpace(input[i]!)) {
      if (input[i] === '"') {
        let text = "";
        let j = i + 1;
        for (; j < input.length && input[j] !== '"'; j++) {
          // \" and \\ stand for themselves; any other backslash is kept.
          if (input[j] === "\\" && (input[j + 1] === '"' || input[j + 1] === "\\")) j++;
          text += input[j];
        }
        if (j >= input.length) throw filterError(`unclosed quote in ${shown(input.slice(start))}`);
        segments.push({ text, quoted: true });
        i = j + 1;
      } else {
        let j = i;
        while (j < input.length && input[j] !== '"' && !isSpace(input[j]!)) j++;
        segments.push({ text: input.slice(i, j), quoted: false });
        i = j;
      }
    }
    if (tokens.length === MAX_FILTER_TOKENS) throw filterError(`the filter has more than ${MAX_FILTER_TOKENS} terms`);
    tokens.push({ raw: input.slice(start, i), segments });
  }
  return tokens;
}

/** The first operator outside quotes: segment index, offset and operator. */
function findOperator(segments: readonly Segment[]): { seg: number; at: number; op: Operator } | undefined {
  for (let s = 0; s < segments.length; s++) {
    const { text, quoted } = segments[s]!;
    if (quoted) continue;
    for (let k = 0; k < text.length; k++) {
      const c = text[k];
      const eq = text[k + 1] === "=";
      if (c === ":") return { seg: s, at: k, op: ":" };
      if (c === "!" && eq) return { seg: s, at: k, op: "!=" };
      if (c === ">" || c === "<") return { seg: s, at: k, op: eq ? (`${c}=` as Operator) : c };
    }
  }
  return undefined;
}

const FIELD = /^([A-Za-z_]+)(?:\.(.*))?$/s;

/**
 * A token's shape. Free text when it has no operator outside quotes, or when what precedes the operator is not a
 * field name (`12:30`, `"a":b`): such a token is matched as text, never refused.
 */
export function shapeOf(token: Token): FieldToken | TextToken {
  let segments = token.segments;
  const first = segments[0]!;
  const negated = !first.quoted && first.text.startsWith("-") && (first.text.length > 1 || segments.length > 1);
  if (negated) segments = first.text.length > 1 ? [{ text: first.text.slice(1), quoted: false }, ...segments.slice(1)] : segments.slice(1);
  const text = (): TextToken => ({ raw: token.raw, negated, text: segments.map((s) => s.text).join("") });
  const found = findOperator(segments);
  if (!found) return text();
  const opSeg = segments[found.seg]!;
  const head = [...segments.slice(0, found.seg), { text: opSeg.text.slice(0, found.at), quoted: false }].filter((s) => s.text !== "" || s.quoted);
  const rest = opSeg.text.slice(found.at + found.op.length);
  const value = [...(rest !== "" ? [{ text: rest, quoted: false }] : []), ...segments.slice(found.seg + 1)];
  if (head.length === 0 || head[0]!.quoted) return text();
  const m = FIELD.exec(head[0]!.text);
  if (!m || (m[2] === undefined && head.length > 1)) return text();
  const key = m[2] === undefined ? undefined : m[2] + head.slice(1).map((s) => s.text).join("");
  return { raw: token.raw, negated, field: m[1]!.toLowerCase(), ...(key !== undefined ? { key } : {}), op: found.op, value };
}

/** A value's items split at commas outside quotes; `quoted` when any part of the item was quoted. */
export function valueItems(value: readonly Segment[]): { text: string; quoted: boolean }[] {
  const items: { text: string; quoted: boolean }[] = [{ text: "", quoted: false }];
  for (const s of value) {
    const last = () => items[items.length - 1]!;
    if (s.quoted) {
      last().text += s.text;
      last().quoted = true;
      continue;
    }
    const parts = s.text.split(",");
    last().text += parts[0];
    for (const p of parts.slice(1)) items.push({ text: p, quoted: false });
  }
  return items;
}

/** The whole value as one string (commas kept): for fields that take one value. */
export const valueText = (value: readonly Segment[]): { text: string; quoted: boolean } => ({
  text: value.map((s) => s.text).join(""),
  quoted: value.some((s) => s.quoted),
});

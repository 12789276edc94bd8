/**
 * What a dataset item is (docs/EVALUATION.md): an effect Schema for one item of `POST /api/datasets/{name}/items`
 * and of an import, and the checks every item passes before it is stored, each error naming its place
 * (`items[3].input`, or the line of an import). Values follow the storable rules of events (core/events/storable.ts):
 * U+0000 and lone surrogates in values are repaired, in ids refused; nesting, string length and key counts are
 * bounded, so an item never fails in Postgres after it was accepted.
 */
import { Either, Schema } from "effect";
import { displayTextProblem } from "../../core/display-text.js";
import { ValidationError } from "../../core/errors.js";
import { makeStorable } from "../../core/events/storable.js";
import { MAX_SDK_RUN_ID_CHARS, MAX_SPAN_ID_CHARS, toValidationError } from "../../core/events/schema.js";
import { uuidv7 } from "../../core/ids.js";

export const ITEM_SOURCES = ["manual", "run", "span", "upload", "api"] as const;
export type ItemSource = (typeof ITEM_SOURCES)[number];
export const ITEM_STATUSES = ["active", "archived"] as const;
export type ItemStatus = (typeof ITEM_STATUSES)[number];

export const MAX_ITEM_ID = 200;
/** Most items one request (or one import) writes. */
export const MAX_ITEMS_PER_WRITE = 10_000;
/** Largest item, its input, expected output and metadata as JSON. */
export const MAX_ITEM_BYTES = 1_048_576;

/** Whether `s` can be an item's id (and so an `after` cursor): 1 to 200 characters, none a control character. */
export const isItemId = (s: string): boolean => s.length >= 1 && s.length <= MAX_ITEM_ID && displayTextProblem(s) === undefined;

const text = (max: number) =>
  Schema.String.pipe(Schema.filter((s) => (s.length >= 1 && s.length <= max) || `must be a string of 1 to ${max} characters`));

/** One item of `POST /api/datasets/{name}/items` (and one line of a JSON Lines import). */
export const ItemInput = Schema.Struct({
  id: Schema.optional(text(MAX_ITEM_ID).pipe(Schema.filter((s) => displayTextProblem(s) === undefined || "must not contain control characters"))),
  input: Schema.Unknown,
  expected_output: Schema.optional(Schema.Unknown),
  metadata: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  source_sdk_run_id: Schema.optional(text(MAX_SDK_RUN_ID_CHARS)),
  source_span_id: Schema.optional(text(MAX_SPAN_ID_CHARS)),
  status: Schema.optional(Schema.Literal(...ITEM_STATUSES).annotations({ message: () => ({ message: "must be active or archived", override: true }) })),
});

const decode = Schema.decodeUnknownEither(ItemInput, { errors: "first", onExcessProperty: "ignore" });
const IDENTIFIERS: ReadonlySet<string> = new Set(["id", "source_sdk_run_id", "source_span_id", "status"]);

/** An item as it is stored: every field present. */
export interface NewItem {
  readonly id: string;
  readonly input: unknown;
  readonly expected_output: unknown;
  readonly metadata: Record<string, unknown>;
  readonly source: ItemSource;
  readonly source_sdk_run_id: string | null;
  readonly source_span_id: string | null;
  readonly status: ItemStatus;
}

/**
 * One item, `place` naming it in errors (`items[3]`, `line 7`): the item with its defaults (a generated id, empty
 * metadata, `source` — `run` or `span` when it names its source run or span, else the given one — and active).
 */
export function parseItem(raw: unknown, place: string, source: ItemSource): NewItem {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new ValidationError({ field: place, message: `${place} must be a JSON object like {"input": …, "expected_output": …}` });
  }
  if (!("input" in raw) || (raw as { input: unknown }).input === undefined) {
    throw new ValidationError({ field: `${place}.input`, message: `${place}.input is required (any JSON value)` });
  }
  let storable: unknown;
  try {
    storable = makeStorable(raw, { identifiers: IDENTIFIERS });
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    const field = err.field && err.field !== "body" ? `${place}.${err.field}` : place;
    throw new ValidationError({ field, message: `${place}: ${err.message}` });
  }
  const item = decode(storable);
  if (Either.isLeft(item)) throw toValidationError(item.left, place);
  const v = item.right;
  const parsed: NewItem = {
    id: v.id ?? uuidv7(),
    input: v.input,
    expected_output: v.expected_output ?? null,
    metadata: v.metadata ?? {},
    source: v.source_span_id ? "span" : v.source_sdk_run_id ? "run" : source,
    source_sdk_run_id: v.source_sdk_run_id ?? null,
    source_span_id: v.source_span_id ?? null,
    status: v.status ?? "active",
  };
  for (const part of ["input", "expected_output", "metadata"] as const) {
    // JSON numbers past the double range (1e309) parse as Infinity, which JSON, and so Postgres, cannot hold.
    if (hasNonFinite(parsed[part])) throw new ValidationError({ field: `${place}.${part}`, message: `${place}.${part} holds a number too large to store (past ±1.8e308)` });
  }
  const bytes = Buffer.byteLength(JSON.stringify([parsed.input, parsed.expected_output, parsed.metadata]));
  if (bytes > MAX_ITEM_BYTES) {
    throw new ValidationError({ field: place, message: `${place} is ${bytes} bytes of JSON; an item may hold at most ${MAX_ITEM_BYTES}` });
  }
  return parsed;
}

/** Whether a parsed JSON value holds Infinity or NaN anywhere (its depth is bounded by makeStorable). */
function hasNonFinite(v: unknown): boolean {
  if (typeof v === "number") return !Number.isFinite(v);
  if (typeof v !== "object" || v === null) return false;
  return (Array.isArray(v) ? v : Object.values(v)).some(hasNonFinite);
}

/** Refuses an item id given twice in one write, naming the second. */
export function checkUniqueIds(items: readonly NewItem[], place: (i: number) => string): void {
  const seen = new Map<string, number>();
  items.forEach((item, i) => {
    const first = seen.get(item.id);
    if (first !== undefined) {
      throw new ValidationError({ field: `${place(i)}.id`, message: `${place(i)}.id ${JSON.stringify(item.id)} is the id of ${place(first)} too` });
    }
    seen.set(item.id, i);
  });
}

/** The `items` of a POST /api/datasets/{name}/items body, all valid or a ValidationError naming the first bad one. */
export function parseItemsBody(body: unknown): NewItem[] {
  const items = (body as { items?: unknown } | null)?.items;
  if (typeof body !== "object" || body === null || !Array.isArray(items)) {
    throw new ValidationError({ field: "items", message: 'the body must be a JSON object like {"items": [{"input": …, "expected_output": …}]}' });
  }
  if (items.length === 0) throw new ValidationError({ field: "items", message: "items is empty: send at least one item" });
  if (items.length > MAX_ITEMS_PER_WRITE) {
    throw new ValidationError({ field: "items", message: `items has ${items.length} items; one request may write at most ${MAX_ITEMS_PER_WRITE}` });
  }
  const parsed = items.map((raw, i) => parseItem(raw, `items[${i}]`, "api"));
  checkUniqueIds(parsed, (i) => `items[${i}]`);
  return parsed;
}

/** JSON with object keys sorted, so two items compare equal however their keys were ordered (jsonb reorders them). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v);
}

/**
 * The runs filter as data: one typed model (an effect Schema, so the OpenAPI document carries it) that the string
 * form (parse.ts, format.ts), the runs list, exports and saved views share. Every part narrows the list: a run is
 * listed when it matches all of them. The Schema admits exactly the filters the string form can spell, so
 * parse(format(f)) gives f back for every f it accepts (a list is never empty, a flag is present only when true).
 */
import { Schema } from "effect";
import { isStorableTime, MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS, RUN_STATUSES } from "../events/schema.js";

/** Bounds of the string form and of the values in it. */
export const MAX_FILTER_CHARS = 2_000;
export const MAX_FILTER_TOKENS = 30;
export const MAX_VALUE_CHARS = 200;
/** Values of one list token (`status:a,b,…`). */
export const MAX_LIST_VALUES = 50;

/** C0 controls and DEL: never in a value (tab, CR and LF only separate tokens). */
export const CONTROL_CHAR = /[\u0000-\u001f\u007f]/;

/** A value the string form can hold: 1..200 characters, no control character, no lone surrogate. */
export const isFilterValue = (s: string): boolean =>
  s.length >= 1 && s.length <= MAX_VALUE_CHARS && !CONTROL_CHAR.test(s) && s.isWellFormed();

const Value = Schema.String.pipe(
  Schema.pattern(/^(?:[^\u0000-\u001f\u007f\ud800-\udfff]|[\ud800-\udbff][\udc00-\udfff]){1,200}$/),
  Schema.filter((s) => isFilterValue(s) || `must be 1 to ${MAX_VALUE_CHARS} characters without control characters`),
).annotations({
  // Generated values (tests) are short and rich in what the string form must quote: spaces, quotes, backslashes,
  // commas, operators, a leading - or *, and characters outside the BMP.
  arbitrary: () => (fc) => fc.oneof(
    fc.stringMatching(/^[-*"\\,:<>=! a-zA-Z0-9.é😀]{1,10}$/),
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 8 }),
  ).filter(isFilterValue),
});
const List = <A, I>(item: Schema.Schema<A, I>) => Schema.Array(item).pipe(Schema.minItems(1), Schema.maxItems(MAX_LIST_VALUES));
const Values = List(Value);
const Finite = Schema.Number.pipe(Schema.finite());
const opt = <A, I>(s: Schema.Schema<A, I>) => Schema.optionalWith(s, { exact: true });

/** A canonical UTC time, `2026-01-02T10:00:00.000Z` (what the parser makes of `from:2026-01-02T10:00Z`). */
export const FilterTime = Schema.String.pipe(
  Schema.filter((s) => {
    const ms = Date.parse(s);
    return (isStorableTime(ms) && new Date(ms).toISOString() === s) || "must be a UTC time like 2026-01-02T10:00:00.000Z between 1970 and 2200";
  }),
).annotations({
  description: "UTC, as Date#toISOString writes it.",
  arbitrary: () => (fc) => fc.integer({ min: MIN_TIMESTAMP_MS, max: MAX_TIMESTAMP_MS }).map((ms) => new Date(ms).toISOString()),
});

/** `since`'s presets: a count and a unit (minutes, hours, days, weeks), e.g. 15m, 24h, 7d, 30d. */
export const SINCE_PATTERN = /^[1-9]\d{0,3}[mhdw]$/;
export const SINCE_UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
const Since = Schema.String.pipe(Schema.pattern(SINCE_PATTERN)).annotations({ description: "A duration back from now: 15m, 24h, 7d, 30d (m, h, d, w)." });

const bounds = {
  min: opt(Finite),
  max: opt(Finite),
  /** Present (true) when the bound itself is left out: `cost>0.05` rather than `cost>=0.05`. */
  min_exclusive: opt(Schema.Literal(true)),
  max_exclusive: opt(Schema.Literal(true)),
};
type Bounds = { readonly min?: number; readonly max?: number; readonly min_exclusive?: true; readonly max_exclusive?: true };
const exclusiveHasItsBound = (r: Bounds) =>
  (r.min_exclusive === undefined || r.min !== undefined) && (r.max_exclusive === undefined || r.max !== undefined) || "an exclusive bound needs its value";

/** A numeric range: at least one bound. */
export const Range = Schema.Struct(bounds).pipe(
  Schema.filter((r) => (r.min !== undefined || r.max !== undefined) || "needs min or max"),
  Schema.filter(exclusiveHasItsBound),
);

/** Runs with a score of this name: any value, or with bounds a number or boolean (1/0) within them. */
export const ScoreCondition = Schema.Struct({ name: Value, ...bounds }).pipe(Schema.filter(exclusiveHasItsBound));

/**
 * A metadata condition. Values are compared as text (`meta.tier:2` matches both 2 and "2"), comparisons as numbers
 * (a value that does not read as a number does not match); `!=` and `not_exists` match runs without the key.
 */
export const MetadataCondition = Schema.Union(
  Schema.Struct({ key: Value, op: Schema.Literal("=", "!="), value: Value }),
  Schema.Struct({ key: Value, op: Schema.Literal(">", "<", ">=", "<="), value: Finite }),
  Schema.Struct({ key: Value, op: Schema.Literal("exists", "not_exists") }),
);

const Status = Schema.Literal(...RUN_STATUSES);

export const RunsFilter = Schema.Struct({
  /** Runs active in the window: their last event at or after `from` (or now − `since`), their start at or before `to`. */
  from: opt(FilterTime),
  to: opt(FilterTime),
  since: opt(Since),
  status: opt(List(Status)),
  status_not: opt(List(Status)),
  agent: opt(Values),
  agent_not: opt(Values),
  config_version: opt(Schema.Int.pipe(Schema.between(1, 2 ** 31 - 1))),
  /** Runs with an LLM call of one of these models, or whose model is one of them. */
  model: opt(Values),
  model_not: opt(Values),
  /** `tag:a,b`: any of them (a one-tag list is tags_all). */
  tags_any: opt(Schema.Array(Value).pipe(Schema.minItems(2), Schema.maxItems(MAX_LIST_VALUES))),
  /** `tag:a tag:b`: every one of them. */
  tags_all: opt(Values),
  /** `-tag:a`: none of them. */
  tags_none: opt(Values),
  metadata: opt(List(MetadataCondition)),
  end_user: opt(Value),
  session: opt(Value),
  environment: opt(Values),
  environment_not: opt(Values),
  release: opt(Values),
  release_not: opt(Values),
  /** USD. */
  cost: opt(Range),
  /** From start to end, ms; a run that has not ended matches no duration range. */
  duration_ms: opt(Range),
  /** Total tokens. */
  tokens: opt(Range),
  score: opt(List(ScoreCondition).pipe(Schema.filter((s) => new Set(s.map((c) => c.name)).size === s.length || "one condition per score name"))),
  /** true: runs with an error (an error event or status error); false: runs without. */
  has_error: opt(Schema.Boolean),
  /** Free text, each term in the run's input, output, error text or span names (case-insensitive). */
  text: opt(Values),
  text_not: opt(Values),
  /** A prefix of the run's id (sdk_run_id), its run_id or its session id. */
  id_prefix: opt(Value),
  /** Runs of experiments and the LLM judge's own runs are left out unless asked for (`is:experiment`, `is:judge`). */
  include_experiments: opt(Schema.Literal(true)),
  include_judge: opt(Schema.Literal(true)),
}).annotations({
  identifier: "RunsFilter",
  description: "The runs filter (docs/EXPLORER.md): every field narrows the list; its string form is the `q` parameter.",
});
export type RunsFilter = typeof RunsFilter.Type;
export type MetadataCondition = typeof MetadataCondition.Type;
export type ScoreCondition = typeof ScoreCondition.Type;
export type Range = typeof Range.Type;

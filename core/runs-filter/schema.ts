/**
 * The runs filter as data: one typed model (an effect Schema, so the OpenAPI document carries it) that the string
 * form (parse.ts, format.ts), the runs list, exports and saved views share. Every part narrows the list: a run is
 * listed when it matches all of them. The Schema admits exactly the filters the string form can spell, so
 * parse(format(f)) gives f back for every f it accepts (a list is never empty, a flag is present only when true).
 */
import { Either, Schema } from "effect";
import { ValidationError } from "../errors.js";
import { isStorableTime, MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS, RUN_STATUSES, toValidationError } from "../events/schema.js";

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
  Schema.filter((s) => isFilterValue(s) || `must be 1 to ${MAX_VALUE_CHARS} characters without control characters`, {
    jsonSchema: { minLength: 1, maxLength: MAX_VALUE_CHARS, pattern: "^[^\\u0000-\\u001f\\u007f]*$" },
  }),
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
  jsonSchema: { format: "date-time" },
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

/** An optional field, described by its token in the string form (the OpenAPI document shows it). */
const field = <A, I>(s: Schema.Schema<A, I>, description: string) => opt(s.annotations({ description }));

export const RunsFilter = Schema.Struct({
  from: field(FilterTime, "`from:2026-01-01`: runs active at or after it (their last event)."),
  to: field(FilterTime, "`to:2026-01-02T10:00Z`: runs started at or before it."),
  since: field(Since, "`since:24h`: runs active in the last 15m, 24h, 7d, 2w… (counted from the request)."),
  status: field(List(Status), "`status:error,running`: any of these statuses."),
  status_not: field(List(Status), "`-status:success`: none of these statuses."),
  agent: field(Values, "`agent:refund`: any of these agents."),
  agent_not: field(Values, "`-agent:refund`"),
  config_version: field(Schema.Int.pipe(Schema.between(1, 2 ** 31 - 1)), "`version:7`: the agent's config version."),
  model: field(Values, "`model:gpt-4o`: an LLM call of one of these models, or the run's model."),
  model_not: field(Values, "`-model:gpt-4o`"),
  tags_any: field(Schema.Array(Value).pipe(Schema.minItems(2), Schema.maxItems(MAX_LIST_VALUES)), "`tag:vip,beta`: any of these tags (one tag goes in tags_all)."),
  tags_all: field(Values, "`tag:vip tag:beta`: every one of these tags."),
  tags_none: field(Values, "`-tag:vip`: none of these tags."),
  metadata: field(List(MetadataCondition), "`meta.customer:acme`, `meta.customer!=acme`, `meta.customer:*`, `-meta.customer:*`, `meta.tier>2`: all of them."),
  end_user: field(Value, "`user:cust-42`: the agent's own user."),
  session: field(Value, "`session:abc`"),
  environment: field(Values, "`env:production`"),
  environment_not: field(Values, "`-env:staging`"),
  release: field(Values, "`release:v1.2`"),
  release_not: field(Values, "`-release:v1.1`"),
  cost: field(Range, "`cost>0.05 cost<1`: USD."),
  duration_ms: field(Range, "`duration>10s` (ms, s, m, h): from start to end; a run that has not ended has no duration."),
  tokens: field(Range, "`tokens>=1000`: total tokens."),
  score: field(
    List(ScoreCondition).pipe(Schema.filter((s) => new Set(s.map((c) => c.name)).size === s.length || "one condition per score name")),
    "`score.correctness<0.5`, `score.helpful:*`: a score of this name (any value, or a number or boolean 1/0 within the bounds).",
  ),
  has_error: field(Schema.Boolean, "`has:error` (true) / `-has:error` (false): an error event or status error."),
  text: field(Values, "Bare words and \"quoted phrases\": each in the run's input, output, error text or span names, case-insensitive."),
  text_not: field(Values, "`-word`, `-\"a phrase\"`: in none of them."),
  id_prefix: field(Value, "`id:0a1b`: a prefix of the run's id (sdk_run_id), its run_id or its session id."),
  include_experiments: field(Schema.Literal(true), "`is:experiment`: include runs of experiments (left out otherwise)."),
  include_judge: field(Schema.Literal(true), "`is:judge`: include the LLM judge's own runs (left out otherwise, unless its agent is named)."),
}).annotations({
  identifier: "RunsFilter",
  description: "The runs filter (docs/EXPLORER.md): every field narrows the list. Its string form is the `q` parameter.",
});
export type RunsFilter = typeof RunsFilter.Type;
export type MetadataCondition = typeof MetadataCondition.Type;
export type ScoreCondition = typeof ScoreCondition.Type;
export type Range = typeof Range.Type;

const decodeFilter = Schema.decodeUnknownEither(RunsFilter, { errors: "first", onExcessProperty: "error" });

/**
 * A RunsFilter given as data (JSON of a saved view, a body) checked against the Schema: the filter, or a
 * ValidationError whose field is `filter.<path>`.
 */
export function checkRunsFilter(value: unknown): RunsFilter {
  const r = decodeFilter(value);
  if (Either.isRight(r)) return r.right;
  const err = toValidationError(r.left, "filter");
  throw new ValidationError({ message: err.message, field: err.field ?? "filter" });
}

/**
 * The runs list's order: a field and a direction. `score.<name>` sorts by the run's latest value of that score
 * (a number, or a boolean as 1/0; the most recently given one when it was given more than once). Runs without a
 * value — not ended for duration, not scored for a score — come last in either direction. Ties are broken by the
 * run's id, so every order is total and a cursor stays stable (stores/runs/runs-sort-sql.ts).
 */
import { Schema } from "effect";
import { ValidationError } from "../errors.js";
import { isFilterValue, MAX_VALUE_CHARS } from "./schema.js";

export const SORT_FIELDS = ["start_time", "duration", "cost", "tokens"] as const;
export const SORT_ORDERS = ["asc", "desc"] as const;

const ScoreSort = Schema.TemplateLiteral("score.", Schema.String).pipe(
  Schema.filter((s) => isFilterValue(s.slice(6)) || `a score name is 1 to ${MAX_VALUE_CHARS} characters`),
);
export const RunsSort = Schema.Struct({
  field: Schema.Union(Schema.Literal(...SORT_FIELDS), ScoreSort),
  order: Schema.Literal(...SORT_ORDERS),
}).annotations({ identifier: "RunsSort", description: "start_time, duration, cost, tokens or score.<name>; asc or desc." });
export type RunsSort = typeof RunsSort.Type;

export const DEFAULT_RUNS_SORT: RunsSort = { field: "start_time", order: "desc" };

/** The score a sort orders by, or undefined for the other fields. */
export const scoreOfSort = (s: RunsSort): string | undefined => (s.field.startsWith("score.") ? s.field.slice(6) : undefined);

/**
 * The `sort` and `order` parameters → a RunsSort (start_time and desc when absent); a ValidationError naming
 * `sort` or `order`.
 */
export function parseRunsSort(sort: string | undefined, order: string | undefined): RunsSort {
  const field = sort ?? DEFAULT_RUNS_SORT.field;
  if (!(SORT_FIELDS as readonly string[]).includes(field) && !(field.startsWith("score.") && isFilterValue(field.slice(6)))) {
    throw new ValidationError({ message: `sort must be one of ${SORT_FIELDS.join(", ")} or score.<name>`, field: "sort" });
  }
  const o = order ?? DEFAULT_RUNS_SORT.order;
  if (!(SORT_ORDERS as readonly string[]).includes(o)) throw new ValidationError({ message: "order must be asc or desc", field: "order" });
  return { field: field as RunsSort["field"], order: o as RunsSort["order"] };
}

/**
 * The runs filter: one model and one string form for every place that lists runs (the runs API, the dashboard,
 * exports, saved views). Pure: no I/O; the SQL it compiles to is in stores/runs/runs-filter-sql.ts.
 *
 *   schema.ts  the RunsFilter Schema and the bounds of the string form
 *   tokens.ts  tokens, quotes, negation, operators
 *   values.ts  numbers, durations, dates and text, read and written
 *   parse.ts   string → RunsFilter (a ValidationError, field `filter`, naming the bad token)
 *   format.ts  RunsFilter → string (parse(format(f)) deep-equals f)
 *   sort.ts    RunsSort: start_time, duration, cost, tokens, score.<name>; asc or desc
 */
export { checkRunsFilter, FilterTime, MAX_FILTER_CHARS, MAX_FILTER_TOKENS, MAX_LIST_VALUES, MAX_VALUE_CHARS, MetadataCondition, Range, RunsFilter, SINCE_UNIT_MS, ScoreCondition } from "./schema.js";
export { FILTER_FIELDS, parseRunsFilter } from "./parse.js";
export { formatRunsFilter } from "./format.js";
export { DEFAULT_RUNS_SORT, parseRunsSort, RunsSort, scoreOfSort, SORT_FIELDS, SORT_ORDERS } from "./sort.js";

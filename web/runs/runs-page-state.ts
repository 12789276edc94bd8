/**
 * What the runs page shows, read from its URL (web/common/runs-url.ts): the filter (`q`), the order, the columns,
 * the page (`cursor`, `limit`). A filter or order that does not read is kept as typed with its message, so the page
 * shows it by the filter bar instead of an error page. The filters' older parameters (`status`, `agent`,
 * `config_version`, `score`, `score_min`, `score_max`: bookmarks of earlier versions) become the same filter's `q`.
 */
import type { Context } from "koa";
import { ValidationError } from "../../core/errors.js";
import {
  DEFAULT_RUNS_SORT, formatRunsFilter, parseRunsFilter, parseRunsSort, type RunsFilter, type RunsSort,
} from "../../core/runs-filter/index.js";
import { RUN_STATUSES, type RunStatus } from "../../core/events/schema.js";
import { queryParam } from "../common/render.js";
import { readColumns, type RunsView } from "../common/runs-url.js";

export const PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 200;

export interface RunsPageState {
  /** As the URL holds it (the filter as typed, even when it does not read). */
  readonly view: RunsView;
  /** The filter and order read from it; undefined when `error` says why not. */
  readonly filter?: RunsFilter;
  readonly sort: RunsSort;
  readonly error?: { readonly field: string; readonly message: string };
  readonly cursor?: string;
  readonly limit: number;
}

/** The page's state from its query parameters (or a form that carries the same names). */
export function readRunsPageState(get: (name: string) => string | undefined): RunsPageState {
  const q = get("q") ?? "";
  const limit = Number(get("limit"));
  const base = { cursor: get("cursor"), limit: Number.isInteger(limit) && limit > 0 ? Math.min(limit, MAX_PAGE_SIZE) : PAGE_SIZE };
  const cols = readColumns(get("cols"));
  let sort: RunsSort = DEFAULT_RUNS_SORT;
  try {
    sort = parseRunsSort(get("sort"), get("order"));
    const filter = parseRunsFilter(q);
    return { ...base, view: { q, sort: sort.field, order: sort.order, cols }, filter, sort };
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    return { ...base, view: { q, sort: sort.field, order: sort.order, cols }, sort, error: { field: err.field ?? "filter", message: err.message } };
  }
}

/** The page's state from the request's URL. */
export const runsPageStateOf = (ctx: Context): RunsPageState => {
  const cols = ctx.query.cols;
  // Checkboxes of the columns form send `cols` once per column; a link sends them comma-separated.
  const joined = Array.isArray(cols) ? cols.join(",") : undefined;
  return readRunsPageState((name) => (name === "cols" && joined !== undefined ? joined : name === "q" ? rawParam(ctx, "q") : queryParam(ctx, name)));
};

/** A parameter as sent, untrimmed (`q` keeps its spaces inside quotes), its first value when repeated. */
function rawParam(ctx: Context, name: string): string | undefined {
  const v = ctx.query[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined ? undefined : s.trim();
}

/** The older filter parameters as the filter's string form, or undefined when none is given. */
export function legacyFilterQuery(ctx: Context): string | undefined {
  const [status, agent, version, score] = ["status", "agent", "config_version", "score"].map((n) => queryParam(ctx, n));
  if (status === undefined && agent === undefined && version === undefined && score === undefined) return undefined;
  const f: { -readonly [K in keyof RunsFilter]?: RunsFilter[K] } = {};
  if (status && (RUN_STATUSES as readonly string[]).includes(status)) f.status = [status as RunStatus];
  if (agent) f.agent = [agent.slice(0, 200)];
  if (version && /^[1-9]\d{0,9}$/.test(version) && Number(version) < 2 ** 31) f.config_version = Number(version);
  if (score) {
    const bound = (n: string) => (queryParam(ctx, n) !== undefined && Number.isFinite(Number(queryParam(ctx, n))) ? Number(queryParam(ctx, n)) : undefined);
    const [min, max] = [bound("score_min"), bound("score_max")];
    f.score = [{ name: score.slice(0, 100), ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) }];
  }
  const q = [queryParam(ctx, "q"), formatRunsFilter(f as RunsFilter)].filter(Boolean).join(" ");
  return q;
}

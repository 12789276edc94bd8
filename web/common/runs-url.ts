/**
 * The runs page's state in its URL (docs/DASHBOARD.md, The runs table): the filter's string form `q`, the order
 * (`sort`, `order`) and the columns (`cols`, comma-separated), each left out at its default, so that a saved view's
 * link, the page's own links and what a person copies from the address bar are one canonical query string.
 */
import { DEFAULT_RUNS_SORT, formatRunsFilter, type RunsSort } from "../../core/runs-filter/index.js";
import { DEFAULT_COLUMNS, RUN_COLUMNS, type RunColumn, type SavedView } from "../../stores/saved-views.js";

export interface RunsView {
  readonly q: string;
  readonly sort: RunsSort["field"];
  readonly order: RunsSort["order"];
  readonly cols: readonly RunColumn[];
}

const sameColumns = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((c, i) => c === b[i]);

/**
 * `?q=…&sort=…&order=…&cols=…` without the defaults ("" when everything is at its default), plus `extra`; without
 * `cols` (the chart's and the export's URLs) the columns are left out.
 */
export function runsQuery(v: Omit<RunsView, "cols"> & { readonly cols?: RunsView["cols"] }, extra: Record<string, string | undefined> = {}): string {
  const p = new URLSearchParams();
  if (v.q) p.set("q", v.q);
  if (v.sort !== DEFAULT_RUNS_SORT.field || v.order !== DEFAULT_RUNS_SORT.order) {
    p.set("sort", v.sort);
    p.set("order", v.order);
  }
  if (v.cols && !sameColumns(v.cols, DEFAULT_COLUMNS)) p.set("cols", v.cols.join(","));
  for (const [k, val] of Object.entries(extra)) if (val !== undefined && val !== "") p.set(k, val);
  const s = p.toString().replace(/\+/g, "%20");
  return s ? `?${s}` : "";
}

/** The columns a `cols` parameter names, in the table's order; unknown names are left out, none means the defaults. */
export function readColumns(raw: string | undefined): RunColumn[] {
  if (raw === undefined) return [...DEFAULT_COLUMNS];
  const named = new Set(raw.split(",").map((c) => c.trim()));
  const cols = RUN_COLUMNS.filter((c) => named.has(c));
  return cols.length ? cols : [...DEFAULT_COLUMNS];
}

/** A saved view's link on the runs page (relative to the project's base). */
export const savedViewPath = (v: SavedView): string => `/dashboard${runsQuery({ q: v.filter, sort: v.sort, order: v.order, cols: v.columns })}`;

/** The charts' range presets: a filter's `since`. */
export const CHART_RANGES = ["1h", "24h", "7d", "30d"] as const;

/**
 * An agent page's chart (web/runs/views/_runs_chart.njk): the agent's runs over the `range` its URL names (`?range=`,
 * default 7d), the links to the other ranges, and the runs page of the same filter.
 */
export function agentChart(agent: string, range: string | undefined, pagePath: string) {
  const since = (CHART_RANGES as readonly string[]).includes(range ?? "") ? range! : "7d";
  const q = formatRunsFilter({ agent: [agent], since });
  return {
    chart_src: `/runs/chart${runsQuery({ q, sort: DEFAULT_RUNS_SORT.field, order: DEFAULT_RUNS_SORT.order })}`,
    ranges: CHART_RANGES.map((r) => ({ label: r, url: `${pagePath}?range=${r}`, active: r === since })),
    runs_url: `/dashboard${runsQuery({ q: formatRunsFilter({ agent: [agent] }), sort: DEFAULT_RUNS_SORT.field, order: DEFAULT_RUNS_SORT.order })}`,
  };
}

/**
 * GET /dashboard: the runs explorer (docs/DASHBOARD.md): counts by status and what needs attention (running, waiting
 * for input, recent errors), the chart of the filter's runs over time, and the runs table — the filter bar (`q`, the
 * filter's string form), the chosen columns, the order, cursor pages, the save-view form and the export links. GET
 * /errors is the same list narrowed to failed runs. The page's whole state is in its URL (runs-page-state.ts), so a
 * link or a saved view reproduces it. `?fragment=summary` returns only the summary block, which the live script
 * re-fetches (throttled) when statuses change; rows are patched from the pushed message itself.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { WebDeps } from "../deps.js";
import { JUDGE_AGENT } from "../../core/events/judge-runs.js";
import { ValidationError } from "../../core/errors.js";
import type { RunRecord } from "../../core/events/run.js";
import { DEFAULT_RUNS_SORT, FILTER_FIELDS, formatRunsFilter, type RunsFilter } from "../../core/runs-filter/index.js";
import { projectOfRequest } from "../auth/project.js";
import { renderFragment, renderPage } from "../common/render.js";
import { runsQuery, savedViewPath } from "../common/runs-url.js";
import { listDatasets } from "../../stores/datasets/datasets.js";
import { listQueues } from "../../stores/evaluation/annotation-queues.js";
import { statusCounts } from "../../stores/runs/run-stats.js";
import { listSavedViews } from "../../stores/saved-views.js";
import { deadLetterCount } from "../admin/dead-letters-page.js";
import { scoreChips, scoreNames } from "../../stores/scores.js";
import { mountPages } from "../route-table.js";
import { columnChoices, columnHeads, scoreSorts } from "./run-columns.js";
import { legacyFilterQuery, runsPageStateOf, type RunsPageState } from "./runs-page-state.js";

const PANEL_SIZE = 6;
/** The chart's range presets: each replaces the filter's own time. */
const RANGES = ["1h", "24h", "7d", "30d"] as const;

async function summary(deps: WebDeps, projectId: number) {
  const [counts, running, waiting, errors] = await Promise.all([
    statusCounts(deps.ports.clickhouse, projectId),
    deps.events.listRuns(projectId, { status: "running", limit: PANEL_SIZE }),
    deps.events.listRuns(projectId, { status: "waiting_for_input", limit: PANEL_SIZE }),
    deps.events.listRuns(projectId, { status: "error", limit: PANEL_SIZE }),
  ]);
  return { counts, running: running.runs, waiting: waiting.runs, errors: errors.runs };
}

export function registerDashboardPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: {
      "GET /dashboard": (ctx: Context) => runsPageOfUrl(ctx, deps, "dashboard"),
      "GET /errors": (ctx: Context) => runsPageOfUrl(ctx, deps, "errors"),
    },
  });
}

export type RunsPageKind = "dashboard" | "errors";

async function runsPageOfUrl(ctx: Context, deps: WebDeps, kind: RunsPageKind): Promise<void> {
  if (kind === "dashboard" && ctx.query.fragment === "summary") {
    return renderFragment(ctx, "_dashboard_summary.njk", await summary(deps, projectOfRequest(ctx).id));
  }
  const legacy = legacyFilterQuery(ctx);
  if (legacy !== undefined) return ctx.redirect(ctx.path + runsQuery({ ...runsPageStateOf(ctx).view, q: legacy }));
  return renderRunsPage(ctx, deps, kind, runsPageStateOf(ctx));
}

/** Whether a pushed run can be matched in the browser: only a filter of statuses and agents (dashboard.js). */
const liveMatchable = (f: RunsFilter): boolean => Object.keys(f).every((k) => k === "status" || k === "agent");

/** The page for `state`; `extra` adds to the template (a refused save-view form's message), `status` its status. */
export async function renderRunsPage(ctx: Context, deps: WebDeps, kind: RunsPageKind, state: RunsPageState, extra: Record<string, unknown> = {}, status?: number): Promise<void> {
  const project = projectOfRequest(ctx);
  const path = kind === "errors" ? "/errors" : "/dashboard";
  const filter: RunsFilter | undefined = state.filter && (kind === "errors" ? { ...state.filter, status: ["error"] } : state.filter);
  let runs: RunRecord[] = [];
  let next: string | null = null;
  let error = state.error;
  if (filter) {
    try {
      const page = await deps.events.listRuns(project.id, { filter, sort: state.sort, cursor: state.cursor, limit: state.limit });
      runs = page.runs;
      next = page.next_cursor;
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      // A stale or hand-edited cursor: start again from the first page rather than fail.
      if (state.cursor && err.field === "cursor") return ctx.redirect(path + runsQuery(state.view));
      error = { field: err.field ?? "filter", message: err.message };
    }
  }
  const [sum, scores, deadLetters, datasets, queues, chips, views] = await Promise.all([
    kind === "dashboard" ? summary(deps, project.id) : Promise.resolve(undefined),
    scoreNames(deps.ports.clickhouse, project.id, 50),
    deadLetterCount(deps, project.id),
    listDatasets(deps.ports.sql, project.id),
    listQueues(deps.ports.sql, project.id),
    state.view.cols.includes("scores") ? scoreChips(deps.ports.clickhouse, project.id, runs.map((r) => r.run_id)) : Promise.resolve(new Map()),
    listSavedViews(deps.ports.sql, project.id),
  ]);
  const here = path + runsQuery(state.view);
  // The page as a saved view would link to it: the filter in its canonical form, so any spelling of a view's filter
  // finds the view (the sidebar marks it; the page takes its name).
  const canonical = path + runsQuery({ ...state.view, q: state.filter ? formatRunsFilter(state.filter) : state.view.q });
  const keep = (extraParams: Record<string, string | undefined>) => path + runsQuery(state.view, extraParams);
  const withTime = (since: string) => path + runsQuery({ ...state.view, q: state.filter ? formatRunsFilter({ ...withoutTime(state.filter), since }) : state.view.q });
  const exportQuery = (format: string, spans: boolean) => `/runs/export${runsQuery({ q: filter ? formatRunsFilter(filter) : "", sort: state.view.sort, order: state.view.order }, { format, spans: spans ? "1" : undefined })}`;
  renderPage(ctx, "dashboard.njk", {
    title: kind === "errors" ? "Errors" : "Dashboard",
    view: kind,
    ...sum,
    runs,
    chips: Object.fromEntries(chips),
    state: state.view,
    filter_error: error,
    cursor: state.cursor,
    limit: state.limit,
    heads: columnHeads(state.view, path),
    score_sorts: scoreSorts(state.view, path, scores),
    sorted_by_score: state.view.sort.startsWith("score.") ? { name: state.view.sort.slice(6), order: state.view.order } : undefined,
    choices: columnChoices(state.view),
    default_sort: state.view.sort === DEFAULT_RUNS_SORT.field && state.view.order === DEFAULT_RUNS_SORT.order,
    runs_path: kind === "dashboard" ? canonical : undefined,
    saved_view: kind === "dashboard" ? views.find((v) => canonical === savedViewPath(v)) : undefined,
    newest_url: here,
    next_url: next ? keep({ cursor: next, limit: state.limit === 50 ? undefined : String(state.limit) }) : null,
    chart_src: filter ? `/runs/chart${runsQuery({ q: formatRunsFilter(filter), sort: DEFAULT_RUNS_SORT.field, order: DEFAULT_RUNS_SORT.order })}` : undefined,
    ranges: state.filter ? RANGES.map((r) => ({ label: r, url: withTime(r), active: state.filter!.since === r && !state.filter!.from && !state.filter!.to })) : [],
    exports: filter ? { csv: exportQuery("csv", false), jsonl: exportQuery("jsonl", false), spans: exportQuery("jsonl", true) } : undefined,
    live: {
      insert: Boolean(filter && liveMatchable(filter) && !state.cursor && state.view.sort === "start_time" && state.view.order === "desc"),
      statuses: filter?.status?.join(",") ?? "",
      agents: filter?.agent?.join(",") ?? "",
    },
    filter_fields: FILTER_FIELDS,
    dead_letters: deadLetters,
    datasets,
    queues,
    error_total: kind === "errors" ? (await statusCounts(deps.ports.clickhouse, project.id)).error : undefined,
    evaluation_agent: JUDGE_AGENT,
    ...extra,
  }, status ?? (error ? 422 : 200));
}

/** The filter without its time fields (a range preset replaces them). */
function withoutTime(f: RunsFilter): RunsFilter {
  const { from: _from, to: _to, since: _since, ...rest } = f;
  return rest;
}

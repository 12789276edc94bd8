/**
 * GET /dashboard: counts by status, what needs attention (running, waiting for input, recent errors) and the
 * latest runs, filterable by status, agent and config version, cursor-paginated. GET /errors is the same list
 * narrowed to failed runs, with their last error. `?fragment=summary` returns only the summary block, which
 * the live script re-fetches (throttled) when statuses change; rows are patched from the pushed message itself.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { WebDeps } from "../deps.js";
import type { RunFilter } from "../../core/ports/event-store.js";
import { RUN_STATUSES, type RunStatus } from "../../core/events/schema.js";
import { JUDGE_AGENT } from "../../core/events/judge-runs.js";
import { ValidationError } from "../../core/errors.js";
import { projectOfRequest } from "../auth/project.js";
import { queryParam, renderFragment, renderPage } from "../common/render.js";
import { listDatasets } from "../../stores/datasets/datasets.js";
import { listQueues } from "../../stores/evaluation/annotation-queues.js";
import { agentNames, statusCounts } from "../../stores/runs/run-stats.js";
import { deadLetterCount } from "../admin/dead-letters-page.js";
import { scoreNames } from "../../stores/scores.js";
import { mountPages } from "../route-table.js";

export const PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 200;
const PANEL_SIZE = 6;

interface Filters {
  status?: RunStatus;
  agent?: string;
  config_version?: number;
  score_name?: string;
  score_min?: number;
  score_max?: number;
  cursor?: string;
  limit: number;
}

/** A number from the query string, or undefined (blank or not a number: the filter is left out). */
function numberQuery(ctx: Context, name: string): number | undefined {
  const raw = queryParam(ctx, name);
  const n = raw === undefined || raw.trim() === "" ? NaN : Number(raw);
  return Number.isFinite(n) ? n : undefined;
}

function readFilters(ctx: Context): Filters {
  const status = queryParam(ctx, "status");
  const version = Number(queryParam(ctx, "config_version"));
  const limit = Number(queryParam(ctx, "limit"));
  return {
    status: (RUN_STATUSES as readonly string[]).includes(status ?? "") ? (status as RunStatus) : undefined,
    agent: queryParam(ctx, "agent")?.slice(0, 200),
    config_version: Number.isInteger(version) && version > 0 ? version : undefined,
    score_name: queryParam(ctx, "score")?.slice(0, 100) || undefined,
    score_min: numberQuery(ctx, "score_min"),
    score_max: numberQuery(ctx, "score_max"),
    cursor: queryParam(ctx, "cursor"),
    limit: Number.isInteger(limit) && limit > 0 ? Math.min(limit, MAX_PAGE_SIZE) : PAGE_SIZE,
  };
}

async function summary(deps: WebDeps, userId: number) {
  const [counts, running, waiting, errors] = await Promise.all([
    statusCounts(deps.ports.clickhouse, userId),
    deps.events.listRuns(userId, { status: "running", limit: PANEL_SIZE }),
    deps.events.listRuns(userId, { status: "waiting_for_input", limit: PANEL_SIZE }),
    deps.events.listRuns(userId, { status: "error", limit: PANEL_SIZE }),
  ]);
  return { counts, running: running.runs, waiting: waiting.runs, errors: errors.runs };
}

export function registerDashboardPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: {
      "GET /dashboard": (ctx: Context) => runsPage(ctx, deps, "dashboard"),
      "GET /errors": (ctx: Context) => runsPage(ctx, deps, "errors"),
    },
  });
}

/** GET /dashboard and GET /errors (the same list, narrowed to failed runs). */
async function runsPage(ctx: Context, deps: WebDeps, view: "dashboard" | "errors"): Promise<void> {
  const project = projectOfRequest(ctx);
  if (view === "dashboard" && ctx.query.fragment === "summary") {
    return renderFragment(ctx, "_dashboard_summary.njk", await summary(deps, project.id));
  }
  const f = readFilters(ctx);
  if (view === "errors") f.status = "error";
  const filter: RunFilter = {
    status: f.status, agent_name: f.agent, config_version: f.config_version, cursor: f.cursor, limit: f.limit,
    ...(f.score_name ? { score_name: f.score_name, score_min: f.score_min, score_max: f.score_max } : {}),
  };
  const scoreKeep = { score: f.score_name, score_min: f.score_name ? f.score_min : undefined, score_max: f.score_name ? f.score_max : undefined };
  let page;
  try {
    page = await deps.events.listRuns(project.id, filter);
  } catch (err) {
    // A stale or hand-edited cursor: start again from the first page rather than fail.
    if (err instanceof ValidationError && f.cursor) return ctx.redirect(ctx.path + qs({ status: f.status, agent: f.agent, config_version: f.config_version, ...scoreKeep }));
    throw err;
  }
  const keep = { status: view === "errors" ? undefined : f.status, agent: f.agent, config_version: f.config_version, ...scoreKeep, limit: f.limit === PAGE_SIZE ? undefined : f.limit };
  const [sum, agents, scores, deadLetters, datasets, queues] = await Promise.all([
    view === "dashboard" ? summary(deps, project.id) : Promise.resolve(undefined),
    agentNames(deps.ports.clickhouse, project.id),
    scoreNames(deps.ports.clickhouse, project.id),
    deadLetterCount(deps, project.id),
    listDatasets(deps.ports.sql, project.id),
    listQueues(deps.ports.sql, project.id),
  ]);
  renderPage(ctx, "dashboard.njk", {
    title: view === "errors" ? "Errors" : "Dashboard",
    view,
    ...sum,
    runs: page.runs,
    next_cursor: page.next_cursor,
    filters: f,
    newest_url: ctx.path + qs(keep),
    next_url: page.next_cursor ? ctx.path + qs({ ...keep, cursor: page.next_cursor }) : null,
    statuses: RUN_STATUSES,
    agent_names: agents,
    score_names: scores,
    dead_letters: deadLetters,
    datasets,
    queues,
    error_total: view === "errors" ? (await statusCounts(deps.ports.clickhouse, project.id)).error : undefined,
    evaluation_agent: JUDGE_AGENT,
  });
}

function qs(params: Record<string, unknown>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "" && k !== "limit") q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}

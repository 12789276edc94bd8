/**
 * OpenTelemetry log records as the API and the run page read them (docs/OTEL.md, Logs):
 *   GET /api/runs/{sdk_run_id}/logs?limit&cursor&q   → the records of the run's trace, oldest first
 *   GET /api/logs?q&limit&cursor&trace_id            → the project's records, newest first
 *   GET /dashboard/:run/logs                         → the run page's twin of the first (the session's project)
 * A span's own records come with the span (web/runs/trace-reads.ts spanOf). Every read is scoped by the caller's
 * project: a trace id another project also sent reads nothing of theirs.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { ValidationError } from "../../core/errors.js";
import { MAX_SDK_RUN_ID_CHARS } from "../../core/events/schema.js";
import { listLogs, type LogPage } from "../../stores/otel-logs.js";
import type { WebDeps } from "../deps.js";
import { intParam, keyPrincipalOf, readAuthorizer, stringParam } from "../api/read-api.js";
import { projectOfRequest } from "../auth/project.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { mountApi, mountPages } from "../route-table.js";
import { answerJson } from "../runs/trace-json.js";

export const DEFAULT_LOG_PAGE = 100;
export const MAX_LOG_PAGE = 1_000;
export const MAX_LOG_QUERY_CHARS = 200;

export function registerLogsApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  mountApi(router, deps, readAuthorizer(deps, auth), {
    read: {
      "GET /api/runs/:sdk_run_id/logs": async (ctx, d) => answerJson(ctx, await runLogs(ctx, d, keyPrincipalOf(ctx).projectId, String(ctx.params.sdk_run_id ?? ""))),
      "GET /api/logs": async (ctx, d) => answerJson(ctx, await projectLogs(ctx, d, keyPrincipalOf(ctx).projectId)),
    },
  });
}

export function registerLogsPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: {
      "GET /dashboard/:run/logs": async (ctx, d) => answerJson(ctx, await runLogs(ctx, d, projectOfRequest(ctx).id, String(ctx.params.run ?? ""))),
    },
  });
}

/** limit, cursor and q of a logs read, each refused with a 422 naming it. */
function pageParams(ctx: Context): { limit: number; cursor?: string; q?: string } {
  const limit = intParam(ctx, "limit", 1, MAX_LOG_PAGE) ?? DEFAULT_LOG_PAGE;
  const cursor = stringParam(ctx, "cursor");
  const q = stringParam(ctx, "q");
  if (q !== undefined && q.length > MAX_LOG_QUERY_CHARS) throw new ValidationError({ message: `q must be text of 1 to ${MAX_LOG_QUERY_CHARS} characters`, field: "q" });
  return { limit, ...(cursor !== undefined ? { cursor } : {}), ...(q !== undefined ? { q } : {}) };
}

/** A trace id as stored: the run's sdk_run_id (an OTLP run's is its trace id, 32 lowercase hex characters). */
function traceIdOf(id: string, field: string): string {
  if (!id || id.length > MAX_SDK_RUN_ID_CHARS) throw new ValidationError({ message: `${field} must be 1 to ${MAX_SDK_RUN_ID_CHARS} characters`, field });
  return id.toLowerCase();
}

/** The run's records (its trace's), whether or not its spans have come yet: a log may arrive first. */
const runLogs = (ctx: Context, deps: WebDeps, projectId: number, sdkRunId: string): Promise<LogPage> => {
  const traceId = traceIdOf(sdkRunId, "sdk_run_id");
  return listLogs(deps.ports.clickhouse, projectId, { ...pageParams(ctx), traceId });
};

function projectLogs(ctx: Context, deps: WebDeps, projectId: number): Promise<LogPage> {
  const params = pageParams(ctx);
  const trace = stringParam(ctx, "trace_id");
  return listLogs(deps.ports.clickhouse, projectId, { ...params, ...(trace !== undefined ? { traceId: traceIdOf(trace, "trace_id") } : {}) });
}

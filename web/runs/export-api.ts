/**
 * Export of the runs a filter matches (docs/API.md, Export):
 *   GET /api/runs/export?q&sort&order&format=csv|jsonl&spans=0|1&limit   (Bearer key of scope read+ingest)
 *   GET /runs/export?… the same for the dashboard's download link (the member's session)
 * Streamed a page of runs at a time (runs-export.ts). Bounded: at most MAX_EXPORT_RUNS runs (MAX_EXPORT_RUNS_WITH_SPANS
 * with spans); the headers say how many matched when it started and whether the file is cut
 * (X-Runwatch-Export-Matched, X-Runwatch-Export-Truncated). At most MAX_EXPORTS_PER_PROJECT exports of a project
 * run at once in a web process; another is answered 429.
 */
import { Readable } from "node:stream";
import type Router from "@koa/router";
import type { Context } from "koa";
import { ValidationError } from "../../core/errors.js";
import { countRunsUpTo } from "../../stores/runs/run-count.js";
import { intParam, keyPrincipalOf, readAuthorizer, stringParam } from "../api/read-api.js";
import { projectOfRequest } from "../auth/project.js";
import type { WebDeps } from "../deps.js";
import { HttpProblem } from "../http-errors.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { mountApi, mountPages } from "../route-table.js";
import { filterParam, sortParam } from "./runs-params.js";
import { EXPORT_FORMATS, MAX_EXPORT_RUNS, MAX_EXPORT_RUNS_WITH_SPANS, runsExportChunks, type RunsExport, type RunsExportFormat } from "./runs-export.js";

export const MAX_EXPORTS_PER_PROJECT = 2;

const CONTENT_TYPES: Record<RunsExportFormat, string> = { csv: "text/csv; charset=utf-8", jsonl: "application/x-ndjson; charset=utf-8" };

/** The export a request asks for; a 422 naming the parameter. */
function exportOf(ctx: Context): RunsExport {
  const format = stringParam(ctx, "format") ?? "csv";
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) throw new ValidationError({ message: "format must be csv or jsonl", field: "format" });
  const spansRaw = stringParam(ctx, "spans") ?? "0";
  if (spansRaw !== "0" && spansRaw !== "1") throw new ValidationError({ message: "spans must be 0 or 1", field: "spans" });
  const spans = spansRaw === "1";
  if (spans && format === "csv") throw new ValidationError({ message: "spans are exported in JSON Lines only: use format=jsonl", field: "spans" });
  const max = spans ? MAX_EXPORT_RUNS_WITH_SPANS : MAX_EXPORT_RUNS;
  return { filter: filterParam(ctx), sort: sortParam(ctx), format: format as RunsExportFormat, spans, limit: intParam(ctx, "limit", 1, max) ?? max };
}

export function registerExportApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  const underWay = new Map<number, number>();
  const send = (ctx: Context, projectId: number) => sendExport(ctx, deps, projectId, underWay);
  mountApi(router, deps, readAuthorizer(deps, auth), { read: { "GET /api/runs/export": (ctx) => send(ctx, keyPrincipalOf(ctx).projectId) } });
  mountPages(router, deps, { read: { "GET /runs/export": (ctx) => send(ctx, projectOfRequest(ctx).id) } });
}

async function sendExport(ctx: Context, deps: WebDeps, projectId: number, underWay: Map<number, number>): Promise<void> {
  const x = exportOf(ctx);
  const running = underWay.get(projectId) ?? 0;
  if (running >= MAX_EXPORTS_PER_PROJECT) {
    throw new HttpProblem(429, "too_many_exports", `at most ${MAX_EXPORTS_PER_PROJECT} exports of a project at a time; retry when one has finished`, undefined, { "Retry-After": "5" });
  }
  underWay.set(projectId, running + 1);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    const n = (underWay.get(projectId) ?? 1) - 1;
    if (n > 0) underWay.set(projectId, n);
    else underWay.delete(projectId);
  };
  try {
    const matched = await countRunsUpTo(deps.ports.clickhouse, projectId, x.filter, x.limit);
    const body = Readable.from(runsExportChunks(deps.events, projectId, x), { objectMode: false });
    body.once("close", release);
    body.once("error", (err) => deps.logger.warn("runs export failed midway", { projectId, err }));
    const day = new Date().toISOString().slice(0, 10);
    ctx.set("Content-Disposition", `attachment; filename="runs-${day}.${x.format}"`);
    ctx.set("Cache-Control", "no-store");
    ctx.set("X-Runwatch-Export-Limit", String(x.limit));
    ctx.set("X-Runwatch-Export-Matched", matched > x.limit ? `>${x.limit}` : String(matched));
    ctx.set("X-Runwatch-Export-Truncated", matched > x.limit ? "true" : "false");
    ctx.type = CONTENT_TYPES[x.format];
    ctx.body = body;
  } catch (err) {
    release();
    throw err;
  }
}

/**
 * GET /dashboard/:run/graph: the run's agent graph as JSON for the run page's graph view (web/static/trace/graph.js),
 * behind the signed-in session like the page itself; the same answer as GET /api/runs/{id}/graph (graph-api.ts).
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { runJson } from "../../core/events/run-json.js";
import { projectOfRequest } from "../auth/project.js";
import type { WebDeps } from "../deps.js";
import { mountPages } from "../route-table.js";
import { runGraph } from "./graph-api.js";

export function registerGraphPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: { "GET /dashboard/:run/graph": graphJson },
  });
}

async function graphJson(ctx: Context, deps: WebDeps): Promise<void> {
  const { run, graph } = await runGraph(deps, projectOfRequest(ctx).id, String(ctx.params.run ?? ""));
  ctx.set("Cache-Control", "no-store");
  ctx.body = { run: runJson(run), graph };
}

/**
 * A run's agent graph (web/runs/agent-graph.ts; docs/API.md, "Agent graph"):
 *   GET /api/runs/{sdk_run_id}/graph → { run, graph: { nodes, edges, span_count, omitted_nodes } }
 * Built from the run's span skeletons as the trace view reads and caches them (trace-reads.ts skeletonOf: one heavy
 * read at a time per project), so the run page's graph and tree share one read.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { NotFound } from "../../core/errors.js";
import type { RunRecord } from "../../core/events/run.js";
import { runJson } from "../../core/events/run-json.js";
import type { WebDeps } from "../deps.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { keyPrincipalOf, readAuthorizer } from "../api/read-api.js";
import { mountApi } from "../route-table.js";
import { buildAgentGraph, type AgentGraph } from "./agent-graph.js";
import { skeletonOf } from "./trace-reads.js";

export function registerGraphApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  mountApi(router, deps, readAuthorizer(deps, auth), {
    read: { "GET /api/runs/:sdk_run_id/graph": getGraph },
  });
}

/** The run and its graph, or a 404 naming the run (shared with the run page's graph route, graph-page.ts). */
export async function runGraph(deps: WebDeps, projectId: number, sdkRunId: string): Promise<{ run: RunRecord; graph: AgentGraph }> {
  const run = await deps.events.getRun(projectId, sdkRunId);
  if (!run) throw new NotFound({ resource: "run", message: `run ${JSON.stringify(sdkRunId)} not found` });
  const { spans } = await skeletonOf(deps, run);
  return { run, graph: buildAgentGraph(spans, { runName: run.agent_name }) };
}

async function getGraph(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const { run, graph } = await runGraph(deps, p.projectId, ctx.params.sdk_run_id!);
  ctx.set("Cache-Control", "no-store");
  ctx.body = { run: runJson(run), graph };
}

/**
 * The runs chart of a filter (docs/API.md, Charts; stores/runs/run-charts.ts) with the config activations of its range:
 *   GET /api/runs/chart?q   (Bearer key of scope read+ingest)
 *   GET /runs/chart?q  the same for the dashboard's and agent pages' charts (the member's session)
 * → { range: {from, to, bucket_seconds}, buckets: [...], scores: [names], activations: [{agent, version, at}] }
 * The range is the filter's own time (from/to or since; the last 24 hours when it names none).
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { activationsBetween } from "../../stores/config-activations.js";
import { runsChart } from "../../stores/runs/run-charts.js";
import { keyPrincipalOf, readAuthorizer } from "../api/read-api.js";
import { projectOfRequest } from "../auth/project.js";
import type { WebDeps } from "../deps.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { mountApi, mountPages } from "../route-table.js";
import { filterParam } from "./runs-params.js";

export function registerChartApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  mountApi(router, deps, readAuthorizer(deps, auth), { read: { "GET /api/runs/chart": (ctx) => sendChart(ctx, deps, keyPrincipalOf(ctx).projectId) } });
  mountPages(router, deps, { read: { "GET /runs/chart": (ctx) => sendChart(ctx, deps, projectOfRequest(ctx).id) } });
}

async function sendChart(ctx: Context, deps: WebDeps, projectId: number): Promise<void> {
  const filter = filterParam(ctx);
  const chart = await runsChart(deps.ports.clickhouse, projectId, filter);
  const activations = await activationsBetween(deps.ports.sql, projectId, chart.range.from, chart.range.to, filter.agent);
  ctx.set("Cache-Control", "no-store");
  ctx.body = { ...chart, activations };
}

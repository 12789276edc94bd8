/**
 * What the runs filter bar completes (stores/runs/filter-values.ts):
 *   GET /api/runs/filter-values?field&prefix&limit   (Bearer key of scope read+ingest)
 *   GET /runs/filter-values?field&prefix        the same for the dashboard's filter bar (the member's session)
 * → { field, values: [...] } (at most 20, alphabetically). field: status, agent, tag, meta (metadata keys),
 * meta.<key> (that key's values), model, env, release, user, score.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { filterValues, MAX_FILTER_VALUES, parseValueField } from "../../stores/runs/filter-values.js";
import { intParam, keyPrincipalOf, readAuthorizer, stringParam } from "../api/read-api.js";
import { projectOfRequest } from "../auth/project.js";
import type { WebDeps } from "../deps.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { mountApi, mountPages } from "../route-table.js";

export function registerFilterValuesApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  mountApi(router, deps, readAuthorizer(deps, auth), { read: { "GET /api/runs/filter-values": (ctx) => sendValues(ctx, deps, keyPrincipalOf(ctx).projectId) } });
  mountPages(router, deps, { read: { "GET /runs/filter-values": (ctx) => sendValues(ctx, deps, projectOfRequest(ctx).id) } });
}

async function sendValues(ctx: Context, deps: WebDeps, projectId: number): Promise<void> {
  const field = parseValueField(stringParam(ctx, "field"));
  const limit = intParam(ctx, "limit", 1, MAX_FILTER_VALUES) ?? MAX_FILTER_VALUES;
  const values = await filterValues(deps.ports.clickhouse, projectId, field, stringParam(ctx, "prefix") ?? "", limit);
  ctx.set("Cache-Control", "no-store");
  ctx.body = { field, values };
}

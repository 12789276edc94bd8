/**
 * Saved views of the runs list, with the same Bearer key as the read API (stores/saved-views.ts; docs/API.md, Saved
 * views):
 *   GET    /api/views         → { views } (every view of the key's project, by name)
 *   POST   /api/views {name, filter?, columns?, sort?, order?} → 201 { view }; 409 view_exists; 422 naming the field
 *   DELETE /api/views/{id}    → 204; 404 when the project has no such view
 * Saving and deleting need a role that may edit views (core/access/roles.ts edit_views); a viewer's key reads.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { checkSavedView, deleteSavedView, insertSavedView, listSavedViews, savedViewJson } from "../../stores/saved-views.js";
import { keyPrincipalOf, readAuthorizer } from "../api/read-api.js";
import type { WebDeps } from "../deps.js";
import { readJsonBody } from "../json-body.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { mountApi } from "../route-table.js";

const MAX_VIEW_BODY = 16 * 1024;

export function registerViewsApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  mountApi(router, deps, readAuthorizer(deps, auth), {
    read: { "GET /api/views": getViews },
    edit_views: { "POST /api/views": createView, "DELETE /api/views/:id": deleteView },
  });
}

async function getViews(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  ctx.set("Cache-Control", "no-store");
  ctx.body = { views: (await listSavedViews(deps.ports.sql, p.projectId)).map(savedViewJson) };
}

async function createView(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const view = checkSavedView(await readJsonBody(ctx, MAX_VIEW_BODY));
  ctx.status = 201;
  ctx.body = { view: savedViewJson(await insertSavedView(deps.ports.sql, p.projectId, p.userId, view)) };
}

async function deleteView(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  await deleteSavedView(deps.ports.sql, p.projectId, ctx.params.id!);
  ctx.status = 204;
}

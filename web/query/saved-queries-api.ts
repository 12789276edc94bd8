/**
 * Saved queries of the /query page, with the same Bearer key as the read API (stores/saved-queries.ts; docs/API.md,
 * Saved queries):
 *   GET    /api/queries        → { queries } (every saved query of the key's project, by name)
 *   POST   /api/queries {name, sql, params?, description?} → 201 { query }; 409 query_exists; 422 naming the field
 *   GET    /api/queries/{id}   → { query }; 404 when the project has no such query (another project's included)
 *   PUT    /api/queries/{id} {name, sql, params?, description?} → { query }: replaces it whole; 404, 409, 422
 *   DELETE /api/queries/{id}   → 204; 404
 * Writing needs a role that may edit queries (core/access/roles.ts edit_queries); a viewer's key reads.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import {
  checkSavedQuery, deleteSavedQuery, getSavedQuery, insertSavedQuery, listSavedQueries, savedQueryJson, updateSavedQuery,
} from "../../stores/saved-queries.js";
import { keyPrincipalOf, readAuthorizer } from "../api/read-api.js";
import type { WebDeps } from "../deps.js";
import { readJsonBody } from "../json-body.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { mountApi } from "../route-table.js";

/** A saved query's SQL (20,000 characters, up to 4 bytes each in UTF-8 and 6 in JSON's escapes) with room for the rest. */
export const MAX_SAVED_QUERY_BODY = 256 * 1024;

export function registerSavedQueriesApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  mountApi(router, deps, readAuthorizer(deps, auth), {
    read: { "GET /api/queries": listQueries, "GET /api/queries/:id": getQuery },
    edit_queries: { "POST /api/queries": createQuery, "PUT /api/queries/:id": replaceQuery, "DELETE /api/queries/:id": deleteQuery },
  });
}

async function listQueries(ctx: Context, deps: WebDeps): Promise<void> {
  ctx.set("Cache-Control", "no-store");
  ctx.body = { queries: (await listSavedQueries(deps.ports.sql, keyPrincipalOf(ctx).projectId)).map(savedQueryJson) };
}

async function getQuery(ctx: Context, deps: WebDeps): Promise<void> {
  ctx.set("Cache-Control", "no-store");
  ctx.body = { query: savedQueryJson(await getSavedQuery(deps.ports.sql, keyPrincipalOf(ctx).projectId, ctx.params.id!)) };
}

async function createQuery(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const query = checkSavedQuery(await readJsonBody(ctx, MAX_SAVED_QUERY_BODY));
  ctx.status = 201;
  ctx.body = { query: savedQueryJson(await insertSavedQuery(deps.ports.sql, p.projectId, p.userId, query)) };
}

async function replaceQuery(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const query = checkSavedQuery(await readJsonBody(ctx, MAX_SAVED_QUERY_BODY));
  ctx.body = { query: savedQueryJson(await updateSavedQuery(deps.ports.sql, p.projectId, p.userId, ctx.params.id!, query)) };
}

async function deleteQuery(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  await deleteSavedQuery(deps.ports.sql, p.projectId, p.userId, ctx.params.id!);
  ctx.status = 204;
}

/**
 * Read-only SQL over the project's data (query/; docs/QUERY.md):
 *
 *   POST /api/query {sql, params?, max_rows?}   (Bearer key with scope read+ingest; any role)
 *     → 200 {columns: [{name, type}], rows: [[…]], truncated, limit: "rows"|null, elapsed_ms}
 *     → 422 {error: {code: "query_refused", message, field: "sql"|"params"|"max_rows"}}   refused before it ran
 *     → 422 {error: {code: "query_limit", message, limit: "time"|"memory"|"bytes"|"rows"}}   a bound hit while it ran
 *   GET  /api/query/schema   → {tables: [{name, description, columns: [{name, type, description}]}]}
 *
 * The same two for the dashboard's session (any member, viewer included): POST /query/run and GET /query/schema.
 * The body is read and the query run as every route that runs one does (query-request.ts).
 */
import type Router from "@koa/router";
import { Either } from "effect";
import type { Context } from "koa";
import { QUERY_TABLES } from "../../query/index.js";
import { keyPrincipalOf, readAuthorizer } from "../api/read-api.js";
import { projectOfRequest } from "../auth/project.js";
import type { WebDeps } from "../deps.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { mountApi, mountPages } from "../route-table.js";
import { runQueryRequest, sendQueryLimit } from "./query-request.js";

export function registerQueryApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  mountApi(router, deps, readAuthorizer(deps, auth), {
    read: {
      "POST /api/query": (ctx) => answerQuery(ctx, deps, keyPrincipalOf(ctx).projectId),
      "GET /api/query/schema": sendSchema,
    },
  });
  mountPages(router, deps, {
    read: {
      "POST /query/run": (ctx) => answerQuery(ctx, deps, projectOfRequest(ctx).id),
      "GET /query/schema": sendSchema,
    },
  });
}

async function answerQuery(ctx: Context, deps: WebDeps, projectId: number): Promise<void> {
  const outcome = await runQueryRequest(ctx, deps, projectId);
  if (Either.isLeft(outcome)) return sendQueryLimit(ctx, outcome.left);
  ctx.set("Cache-Control", "no-store");
  ctx.body = outcome.right;
}

function sendSchema(ctx: Context): void {
  ctx.set("Cache-Control", "no-store");
  ctx.body = { tables: QUERY_TABLES };
}

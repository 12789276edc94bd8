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
 */
import type Router from "@koa/router";
import { Effect, Either } from "effect";
import type { Context } from "koa";
import { QUERY_TABLES, runProjectQuery } from "../../query/index.js";
import { keyPrincipalOf, readAuthorizer } from "../api/read-api.js";
import { projectOfRequest } from "../auth/project.js";
import type { WebDeps } from "../deps.js";
import { HttpProblem } from "../http-errors.js";
import { readJsonBody } from "../json-body.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { mountApi, mountPages } from "../route-table.js";

/** SQL of up to 64 Ki characters (in UTF-8 at most 4 bytes each) and its params. */
const QUERY_BODY_LIMIT = 512 * 1024;

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

const refused = (field: string, message: string) => new HttpProblem(422, "query_refused", message, field);

async function answerQuery(ctx: Context, deps: WebDeps, projectId: number): Promise<void> {
  const body = await readJsonBody(ctx, QUERY_BODY_LIMIT);
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw refused("sql", "the body must be a JSON object {sql, params?, max_rows?}");
  const { sql, params, max_rows } = body as Record<string, unknown>;
  if (typeof sql !== "string") throw refused("sql", "sql must be a string: one SELECT query");
  if (params !== undefined && params !== null && (typeof params !== "object" || Array.isArray(params))) throw refused("params", "params must be an object of name → value");
  if (max_rows !== undefined && max_rows !== null && typeof max_rows !== "number") throw refused("max_rows", "max_rows must be an integer");
  const outcome = await Effect.runPromise(Effect.either(runProjectQuery(deps.ports.clickhouse, {
    projectId,
    sql,
    ...(params ? { params: params as Record<string, unknown> } : {}),
    ...(typeof max_rows === "number" ? { maxRows: max_rows } : {}),
  })));
  ctx.set("Cache-Control", "no-store");
  if (Either.isRight(outcome)) {
    ctx.body = outcome.right;
    return;
  }
  const e = outcome.left;
  if (e._tag === "QueryRefused") throw refused(e.field, e.message);
  ctx.status = 422;
  ctx.body = { error: { code: "query_limit", message: e.message, limit: e.limit } };
}

function sendSchema(ctx: Context): void {
  ctx.set("Cache-Control", "no-store");
  ctx.body = { tables: QUERY_TABLES };
}

/**
 * One query request as every route that runs one reads it (POST /api/query and POST /query/run of query-api.ts, the
 * downloads of query-export-api.ts): the JSON body {sql, params?, max_rows?}, the query run in the sandbox (query/),
 * and its refusals answered one way — refused before it ran, 422 `query_refused` naming the field; a bound hit while
 * it ran, 422 `query_limit` naming the limit (sendQueryLimit). So a file and a table of the same query never differ in
 * what they accept or how they say no.
 */
import { Effect, Either } from "effect";
import type { Context } from "koa";
import { runProjectQuery, type QueryResult } from "../../query/index.js";
import type { WebDeps } from "../deps.js";
import { HttpProblem } from "../http-errors.js";
import { readJsonBody } from "../json-body.js";

/** SQL of up to 64 Ki characters (in UTF-8 at most 4 bytes each) and its params. */
const QUERY_BODY_LIMIT = 512 * 1024;

/** A bound the query hit while it ran: which, and in words a person or a model can act on. */
export interface QueryLimit {
  readonly limit: string;
  readonly message: string;
}

const refused = (field: string, message: string) => new HttpProblem(422, "query_refused", message, field);

/** Reads the request's body and runs its query in the project; a refusal is thrown (422 naming the field). */
export async function runQueryRequest(ctx: Context, deps: WebDeps, projectId: number): Promise<Either.Either<QueryResult, QueryLimit>> {
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
  if (Either.isRight(outcome)) return Either.right(outcome.right);
  const e = outcome.left;
  if (e._tag === "QueryRefused") throw refused(e.field, e.message);
  return Either.left({ limit: e.limit, message: e.message });
}

/** A bound hit while the query ran: 422 `query_limit` with the limit named beside the message. */
export function sendQueryLimit(ctx: Context, hit: QueryLimit): void {
  ctx.set("Cache-Control", "no-store");
  ctx.status = 422;
  ctx.body = { error: { code: "query_limit", message: hit.message, limit: hit.limit } };
}

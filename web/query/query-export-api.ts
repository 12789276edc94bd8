/**
 * A query's rows as a file (docs/API.md, POST /api/query/export):
 *   POST /api/query/export?format=csv|jsonl {sql, params?, max_rows?}   (Bearer key of scope read+ingest)
 *   POST /query/export?format=csv|jsonl   the same for the page's download buttons (the member's session)
 * The export runs the query as POST /api/query does, with the same checks and bounds (rows, bytes, time, memory), and
 * answers its refusals the same way (query-request.ts: 422 naming the field, or the limit hit); a file cut at a bound
 * says so in X-Runwatch-Query-Truncated and X-Runwatch-Query-Limit, beside X-Runwatch-Query-Rows.
 */
import { Readable } from "node:stream";
import type Router from "@koa/router";
import type { Context } from "koa";
import { ValidationError } from "../../core/errors.js";
import { keyPrincipalOf, readAuthorizer, stringParam } from "../api/read-api.js";
import { projectOfRequest } from "../auth/project.js";
import type { WebDeps } from "../deps.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { mountApi, mountPages } from "../route-table.js";
import { runQueryRequest, sendQueryLimit } from "./query-request.js";
import { Either } from "effect";
import { RESULT_FORMATS, resultFileChunks, type ResultFormat } from "./result-file.js";

const CONTENT_TYPES: Record<ResultFormat, string> = { csv: "text/csv; charset=utf-8", jsonl: "application/x-ndjson; charset=utf-8" };

export function registerQueryExportApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  mountApi(router, deps, readAuthorizer(deps, auth), { read: { "POST /api/query/export": (ctx) => sendFile(ctx, deps, keyPrincipalOf(ctx).projectId) } });
  mountPages(router, deps, { read: { "POST /query/export": (ctx) => sendFile(ctx, deps, projectOfRequest(ctx).id) } });
}

function formatOf(ctx: Context): ResultFormat {
  const format = stringParam(ctx, "format") ?? "csv";
  if (!(RESULT_FORMATS as readonly string[]).includes(format)) throw new ValidationError({ message: "format must be csv or jsonl", field: "format" });
  return format as ResultFormat;
}

async function sendFile(ctx: Context, deps: WebDeps, projectId: number): Promise<void> {
  const format = formatOf(ctx);
  const outcome = await runQueryRequest(ctx, deps, projectId);
  if (Either.isLeft(outcome)) return sendQueryLimit(ctx, outcome.left);
  const answer = outcome.right;
  ctx.set("Content-Disposition", `attachment; filename="query-${new Date().toISOString().slice(0, 10)}.${format}"`);
  ctx.set("Cache-Control", "no-store");
  ctx.set("X-Runwatch-Query-Rows", String(answer.rows.length));
  ctx.set("X-Runwatch-Query-Truncated", answer.truncated ? "true" : "false");
  ctx.set("X-Runwatch-Query-Limit", answer.limit ?? "");
  ctx.type = CONTENT_TYPES[format];
  ctx.body = Readable.from(resultFileChunks(answer, format), { objectMode: false });
}

/**
 * The trace view's API (docs/API.md, "Trace"), with the same Bearer key as the rest of the read API:
 *   GET /api/runs/{sdk_run_id}/tree?limit&after&at         → a page of span skeletons in tree order
 *   GET /api/runs/{sdk_run_id}/tree?since&n                → the spans changed after a cursor
 *   GET /api/runs/{sdk_run_id}/spans/{span_id}             → one span whole: input, output, metadata, events, scores
 *   GET /api/runs/{sdk_run_id}/search?q&limit              → the spans whose payloads hold some text
 * trace-page.ts mounts the same reads behind the dashboard's session, for the run page.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { NotFound, ValidationError } from "../../core/errors.js";
import { MAX_SPAN_ID_CHARS } from "../../core/events/schema.js";
import type { RunRecord } from "../../core/events/run.js";
import type { WebDeps } from "../deps.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { keyPrincipalOf, readAuthorizer } from "../api/read-api.js";
import { mountApi } from "../route-table.js";
import { searchOf, spanOf, treeOf } from "./trace-reads.js";
import { answerJson } from "./trace-json.js";

export function registerTraceApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  mountApi(router, deps, readAuthorizer(deps, auth), {
    read: {
      "GET /api/runs/:sdk_run_id/tree": async (ctx, d) => answerJson(ctx, await treeOf(ctx, d, {
        projectId: keyPrincipalOf(ctx).projectId, sdkRunId: String(ctx.params.sdk_run_id ?? ""), run: runOfKey(ctx, d),
      })),
      "GET /api/runs/:sdk_run_id/spans/:span_id": async (ctx, d) => answerJson(ctx, await spanOf(d, await runOfKey(ctx, d), spanIdParam(ctx))),
      "GET /api/runs/:sdk_run_id/search": async (ctx, d) => answerJson(ctx, await searchOf(ctx, d, await runOfKey(ctx, d))),
    },
  });
}

async function runOfKey(ctx: Context, deps: WebDeps): Promise<RunRecord> {
  return runNamed(deps, keyPrincipalOf(ctx).projectId, String(ctx.params.sdk_run_id ?? ""));
}

/** The project's run of that sdk_run_id, or a 404. */
export async function runNamed(deps: WebDeps, projectId: number, sdkRunId: string): Promise<RunRecord> {
  const run = await deps.events.getRun(projectId, sdkRunId);
  if (!run) throw new NotFound({ resource: "run", message: `run ${JSON.stringify(sdkRunId)} not found` });
  return run;
}

/** The `:span_id` of a route: at most MAX_SPAN_ID_CHARS characters (what ingest takes). */
export function spanIdParam(ctx: Context): string {
  const id = String(ctx.params.span_id ?? "");
  if (!id || id.length > MAX_SPAN_ID_CHARS) throw new ValidationError({ message: `span_id must be 1 to ${MAX_SPAN_ID_CHARS} characters`, field: "span_id" });
  return id;
}

/**
 * The trace view's reads behind the dashboard's session, for the run page's script (web/static/run.js): the twins of
 * trace-api.ts, answering the same JSON, and the run's own part of its panel.
 *   GET /dashboard/:run/tree, /dashboard/:run/spans/:span_id, /dashboard/:run/search   (as the API)
 *   GET /dashboard/:run/overview → the run's input, output and run-level events
 * The page's first read of the tree names the run's version its page started the tree's read at (`started`), so it
 * joins that read instead of making another when the run has moved on meanwhile.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { RunRecord } from "../../core/events/run.js";
import type { WebDeps } from "../deps.js";
import { projectOfRequest } from "../auth/project.js";
import { mountPages } from "../route-table.js";
import { runNamed, spanIdParam } from "./trace-api.js";
import { runOverview, searchOf, spanOf, treeOf, type RunRef } from "./trace-reads.js";
import { answerJson } from "./trace-json.js";

export function registerTracePage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: {
      "GET /dashboard/:run/tree": async (ctx, d) => answerJson(ctx, await treeOf(ctx, d, refOfPage(ctx, d))),
      "GET /dashboard/:run/spans/:span_id": async (ctx, d) => answerJson(ctx, await spanOf(d, await runOfPage(ctx, d), spanIdParam(ctx))),
      "GET /dashboard/:run/search": async (ctx, d) => answerJson(ctx, await searchOf(ctx, d, await runOfPage(ctx, d))),
      "GET /dashboard/:run/overview": async (ctx, d) => answerJson(ctx, await runOverview(d, await runOfPage(ctx, d))),
    },
  });
}

const runOfPage = (ctx: Context, deps: WebDeps): Promise<RunRecord> => runNamed(deps, projectOfRequest(ctx).id, String(ctx.params.run ?? ""));

/** The run of the page's request, and (`?started=`) the run's version when the page started the tree's read. */
function refOfPage(ctx: Context, deps: WebDeps): RunRef {
  const started = Number(ctx.query.started);
  return {
    projectId: projectOfRequest(ctx).id, sdkRunId: String(ctx.params.run ?? ""), run: runOfPage(ctx, deps),
    ...(Number.isSafeInteger(started) ? { started } : {}),
  };
}

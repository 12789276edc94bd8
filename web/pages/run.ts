/**
 * GET /dashboard/:run (the client's sdk_run_id): the run header and its event stream as a timeline.
 * `?fragment=live` returns the header and timeline only; the live script re-fetches it (throttled) when the
 * gateway pushes an event of this run, so the page is rendered by one template whether loaded or updated.
 */
import type Router from "@koa/router";
import { countWithinBytes, jsonSize, MAX_RUN_PAGE_BYTES } from "../api/byte-pages.js";
import type { Context } from "koa";
import type { SessionUser, WebDeps } from "../deps.js";
import { requireUser } from "../auth/session.js";
import { queryParam, renderFragment, renderPage } from "./render.js";
import { buildTimeline } from "./timeline.js";
import { buildSpans } from "../../core/events/spans.js";
import { buildSpanTree, MAX_TREE_DEPTH } from "./span-tree.js";
import { humanInputView } from "./human-input.js";
import { scoresView } from "./scores.js";

/** Events shown per page of a run; a longer run links to the next page (by event id). */
export const EVENTS_PER_PAGE = 1000;
/** Events read for the trace: 20,000 is a run of 10,000 spans. */
export const TRACE_EVENTS = 20_000;

export function register(router: Router, deps: WebDeps): void {
  router.get("/dashboard/:run", requireUser, async (ctx: Context) => {
    const user = ctx.state.user as SessionUser;
    await deps.heavyReads.run(user.id, () => runPage(ctx, deps, user));
  });
}

async function runPage(ctx: Context, deps: WebDeps, user: SessionUser): Promise<void> {
  const sdkRunId = String(ctx.params.run ?? "");
  const run = await deps.events.getRun(user.id, sdkRunId);
  if (!run) {
    return renderPage(ctx, "error.njk", {
      title: "Run not found",
      heading: "Run not found",
      message: `There is no run “${sdkRunId}” in your account. It may not have been ingested yet.`,
    }, 404);
  }
  const after = queryParam(ctx, "after");
  const events = await deps.events.listEvents(user.id, run.run_id, { limit: EVENTS_PER_PAGE + 1, after });
  const fit = countWithinBytes(events.slice(0, EVENTS_PER_PAGE), MAX_RUN_PAGE_BYTES, (e) => jsonSize(e.payload));
  const more = events.length > fit;
  if (more) events.length = fit;
  const live = run.status === "running" || run.status === "waiting_for_input";
  const timeline = buildTimeline(events, { live });
  // The trace pairs spans across the whole run, so it reads the run's span events up to TRACE_EVENTS, their long
  // values cut by the store (the timeline below pages the events whole); a longer run shows the trace of its first
  // TRACE_EVENTS span events, and the tree renders its first spans within a budget (span-tree.ts).
  const all = !after && !more ? events : await deps.events.listSpanEvents(user.id, run.run_id, { limit: TRACE_EVENTS });
  const tree = buildSpanTree(buildSpans(all), { live });
  const vars = {
    title: `${run.agent_name || "Run"} · ${sdkRunId}`,
    run,
    timeline,
    tree,
    max_depth: MAX_TREE_DEPTH,
    event_total: run.event_count,
    shown_from: after,
    next_after: more ? events[events.length - 1]!.event_id : null,
    live,
    human_input: ctx.query.fragment === "live" ? null : await humanInputView(deps, run),
  };
  if (ctx.query.fragment === "live") return renderFragment(ctx, "_run_live.njk", vars);
  renderPage(ctx, "run.njk", { ...vars, scores: await scoresView(deps, run) });
}

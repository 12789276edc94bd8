/**
 * GET /dashboard/:run (the client's sdk_run_id): the run header and its event stream as a timeline.
 * `?fragment=live` returns the header, trace and timeline only; the live script re-fetches it (throttled) when the
 * gateway pushes an event of this run. With the page's cursor (`since`, `n`, `st`) it returns only what changed
 * since (run-delta.ts), rendered by the same macros as the page.
 */
import type Router from "@koa/router";
import { countWithinBytes, jsonSize, MAX_RUN_PAGE_BYTES } from "./byte-pages.js";
import type { Context } from "koa";
import type { WebDeps } from "../deps.js";
import type { Membership } from "../../stores/accounts/projects.js";
import { projectOfRequest } from "../auth/project.js";
import { queryParam, renderFragment, renderPage } from "../common/render.js";
import { buildTimeline } from "./timeline.js";
import { buildSpans } from "../../core/events/spans.js";
import { buildSpanTree, MAX_TREE_DEPTH } from "./span-tree.js";
import { humanInputView } from "../human-input/human-input-page.js";
import { scoresView } from "./scores-page.js";
import { cursorOf, liveDelta, parseSince } from "./run-delta.js";
import { runInputOutput, spanInputOutput } from "../../core/events/run-io.js";
import { listQueues } from "../../stores/evaluation/annotation-queues.js";
import { listDatasets } from "../../stores/datasets/datasets.js";
import { mountPages } from "../route-table.js";

/** Events shown per page of a run; a longer run links to the next page (by event id). */
export const EVENTS_PER_PAGE = 1000;
/** Events read for the trace: 20,000 is a run of 10,000 spans. */
export const TRACE_EVENTS = 20_000;

export function registerRunPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: { "GET /dashboard/:run": runPage },
  });
}

/** GET /dashboard/:run: a heavy read, one at a time per project in this process (web/heavy-reads.ts). */
async function runPage(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  await deps.heavyReads.run(project.id, () => renderRun(ctx, deps, project));
}

async function renderRun(ctx: Context, deps: WebDeps, project: Membership): Promise<void> {
  const sdkRunId = String(ctx.params.run ?? "");
  const run = await deps.events.getRun(project.id, sdkRunId);
  if (!run) {
    return renderPage(ctx, "error.njk", {
      title: "Run not found",
      heading: "Run not found",
      message: `There is no run “${sdkRunId}” in ${project.name}. It may not have been ingested yet.`,
    }, 404);
  }
  const after = queryParam(ctx, "after");
  const since = ctx.query.fragment === "live" ? parseSince(ctx.query) : null;
  const events = await deps.events.listEvents(project.id, run.run_id, { limit: EVENTS_PER_PAGE + 1, after });
  const fit = countWithinBytes(events.slice(0, EVENTS_PER_PAGE), MAX_RUN_PAGE_BYTES, (e) => jsonSize(e.payload));
  const more = events.length > fit;
  if (more) events.length = fit;
  const live = run.status === "running" || run.status === "waiting_for_input";
  const timeline = buildTimeline(events, { live });
  // The trace pairs spans across the whole run, so it reads the run's span events up to TRACE_EVENTS, their long
  // values cut by the store (the timeline below pages the events whole); a longer run shows the trace of its first
  // TRACE_EVENTS span events, and the tree renders its first spans within a budget (span-tree.ts).
  const spanEvents = !after && !more ? events : await deps.events.listSpanEvents(project.id, run.run_id, { limit: TRACE_EVENTS });
  const tree = buildSpanTree(buildSpans(spanEvents), { live });
  const vars = {
    title: `${run.agent_name || "Run"} · ${sdkRunId}`,
    run,
    timeline,
    tree,
    max_depth: MAX_TREE_DEPTH,
    event_total: run.event_count,
    shown_from: after,
    next_after: more ? events[events.length - 1]!.event_id : null,
    per_page: EVENTS_PER_PAGE,
    live,
    cursor_state: { ...cursorOf(events, spanEvents), tl_total: timeline.total_ms, tree_total: tree.total_ms },
  };
  if (ctx.query.fragment === "live") {
    const delta = since && liveDelta(since, run, { events, spanEvents, live }, { timeline, tree });
    ctx.set("X-Runwatch-Fragment", delta ? "delta" : "whole");
    return renderFragment(ctx, delta ? "_run_delta.njk" : "_run_live.njk", { ...vars, delta });
  }
  const [humanInput, scores, datasets, queues] = await Promise.all([
    humanInputView(deps, run), scoresView(deps, run), listDatasets(deps.ports.sql, project.id), listQueues(deps.ports.sql, project.id),
  ]);
  // ?span=<id>: "Add to dataset" takes that span's input and output instead of the run's.
  const spanId = typeof ctx.query.span === "string" && ctx.query.span.length <= 64 ? ctx.query.span : undefined;
  const spanEventsOfItem = spanId ? await deps.events.eventsOfSpan(project.id, run.run_id, spanId) : [];
  const source = spanEventsOfItem.length ? { span_id: spanId, ...spanInputOutput(spanEventsOfItem) } : runInputOutput(events);
  renderPage(ctx, "run.njk", { ...vars, human_input: humanInput, scores, add_to_dataset: { datasets, ...source }, queues });
}

/**
 * GET /dashboard/:run (the client's sdk_run_id): the run header, and the trace view — the span tree beside the
 * selected span's panel, drawn by web/static/run.js from the tree's JSON (trace-page.ts), which it reads in pages
 * after the page: the page itself stays small whatever the run's size, and is answered without waiting for the tree,
 * whose read it starts (the script's first read of the tree then waits for that one). Without JavaScript, the page
 * links to `?static=1`, which lists the first spans as nested lists. `?fragment=live` returns the header alone; the
 * live script re-fetches it when the gateway pushes an event of this run, beside the tree's changes since its cursor.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { WebDeps } from "../deps.js";
import type { Membership } from "../../stores/accounts/projects.js";
import { projectOfRequest } from "../auth/project.js";
import { renderFragment, renderPage } from "../common/render.js";
import { humanInputView } from "../human-input/human-input-page.js";
import { scoresView } from "./scores-page.js";
import { runInputOutput, spanInputOutput } from "../../core/events/run-io.js";
import type { SpanSkeleton } from "../../core/events/span-skeleton.js";
import { MAX_SPAN_ID_CHARS } from "../../core/events/schema.js";
import { listQueues } from "../../stores/evaluation/annotation-queues.js";
import { listDatasets } from "../../stores/datasets/datasets.js";
import { mountPages } from "../route-table.js";
import { skeletonOf } from "./trace-reads.js";

/** Spans listed without JavaScript (?static=1), and the deepest level nested (deeper ones are listed flat under it). */
export const NOSCRIPT_SPANS = 200;
export const MAX_NOSCRIPT_DEPTH = 40;

export function registerRunPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: { "GET /dashboard/:run": runPage },
  });
}

/** A span of the list shown without JavaScript, with the markup around it: lists to close before it, and whether a list of children opens after it. */
export interface NestedRow {
  span: SpanSkeleton;
  closes: number;
  opens: boolean;
  depth: number;
}

/** The first `max` spans of a tree (in tree order, with depths) as nested lists, nesting at most MAX_NOSCRIPT_DEPTH. */
export function nestedRows(spans: readonly SpanSkeleton[], max: number): { rows: NestedRow[]; closes: number } {
  const shown = spans.slice(0, max);
  const depth = (s: SpanSkeleton | undefined) => Math.min(s?.depth ?? 0, MAX_NOSCRIPT_DEPTH + 1);
  const rows: NestedRow[] = [];
  let open = 0; // lists of children open around the next row
  for (let i = 0; i < shown.length; i++) {
    const d = depth(shown[i]);
    const closes = Math.max(0, open - d);
    open -= closes;
    const next = shown[i + 1];
    const opens = next !== undefined && depth(next) > d && d <= MAX_NOSCRIPT_DEPTH;
    if (opens) open++;
    rows.push({ span: shown[i]!, closes, opens, depth: d });
  }
  return { rows, closes: open };
}

async function runPage(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  const sdkRunId = String(ctx.params.run ?? "");
  const run = await deps.events.getRun(project.id, sdkRunId);
  if (!run) {
    return renderPage(ctx, "error.njk", {
      title: "Run not found",
      heading: "Run not found",
      message: `There is no run “${sdkRunId}” in ${project.name}. It may not have been ingested yet.`,
    }, 404);
  }
  if (ctx.query.fragment === "live") return renderFragment(ctx, "_run_live.njk", { run });
  return renderRun(ctx, deps, project, run);
}

async function renderRun(ctx: Context, deps: WebDeps, project: Membership, run: NonNullable<Awaited<ReturnType<WebDeps["events"]["getRun"]>>>): Promise<void> {
  // ?span=<id>: "Add to dataset" takes that span's input and output instead of the run's (the form without JavaScript).
  const spanId = typeof ctx.query.span === "string" && ctx.query.span.length <= MAX_SPAN_ID_CHARS ? ctx.query.span : undefined;
  // The tree's read starts now; the page waits for it only when it lists spans itself (?static=1, without JavaScript).
  const skeleton = skeletonOf(deps, run);
  skeleton.catch(() => {}); // the script's own read of the tree reports a failure
  const [humanInput, scores, datasets, queues, source, listed] = await Promise.all([
    humanInputView(deps, run), scoresView(deps, run), listDatasets(deps.ports.sql, project.id), listQueues(deps.ports.sql, project.id),
    addToDatasetSource(deps, run, spanId),
    ctx.query.static === "1" ? skeleton.then((sk) => ({ total: sk.spans.length, ...nestedRows(sk.spans, NOSCRIPT_SPANS) })) : null,
  ]);
  renderPage(ctx, "run.njk", {
    title: `${run.agent_name || "Run"} · ${run.external_id}`,
    run, listed, human_input: humanInput, scores, add_to_dataset: { datasets, ...source }, queues,
  });
}

/** What "Add to dataset" takes: the span's input and output when the page names one of its spans, else the run's. */
async function addToDatasetSource(deps: WebDeps, run: { project_id: number; run_id: string }, spanId: string | undefined) {
  const spanEvents = spanId ? await deps.events.eventsOfSpan(run.project_id, run.run_id, spanId) : [];
  if (spanEvents.length) return { span_id: spanId, ...spanInputOutput(spanEvents) };
  return runInputOutput(await deps.events.eventsOfTypes(run.project_id, run.run_id, ["run_start", "run_end"], 10));
}

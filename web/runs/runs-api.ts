/**
 * Read API with the same Bearer key as ingest:
 *   GET /api/runs?q&sort&order&status&agent_name&session_id&since&config_version&score_name&score_min&score_max&cursor&limit
 *     → { runs, next_cursor, filter (q as read), sort } (the parameters: runs-list-params.ts)
 *   GET /api/runs/{sdk_run_id}?limit&after                            → { run, events, next_after }
 *   GET /api/runs/{sdk_run_id}/spans?limit&after                      → { run, spans, next_after } (core/events/spans.ts)
 *     (a page also ends before MAX_EVENTS_PAGE_BYTES of JSON; next_after then continues from its last event)
 * Reads have their own rate-limit bucket per key, so polling a run never eats into the ingest budget.
 */
import type Router from "@koa/router";
import { countWithinBytes, jsonSize, MAX_EVENTS_PAGE_BYTES } from "./byte-pages.js";
import type { Context } from "koa";
import { NotFound, ValidationError } from "../../core/errors.js";
import { MAX_EVENTS_LIMIT } from "../../stores/runs/event-store.js";
import { runJson } from "../../core/events/run-json.js";
import { buildSpans } from "../../core/events/spans.js";
import type { WebDeps } from "../deps.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { intParam, keyPrincipalOf, readAuthorizer, stringParam } from "../api/read-api.js";
import { runsListQuery } from "./runs-list-params.js";
import { eventJson } from "./event-json.js";
import { mountApi } from "../route-table.js";

const DEFAULT_EVENTS = 1000;
const MAX_EVENTS = 5000;
const DEFAULT_SPANS_PAGE = 1_000;
const MAX_SPANS_PAGE = 5_000;

export function registerRunsApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  const authorize = readAuthorizer(deps, auth);
  mountApi(router, deps, authorize, {
    read: {
      "GET /api/runs": getRuns,
      "GET /api/runs/:sdk_run_id": getRun,
      "GET /api/runs/:sdk_run_id/spans": getSpans,
    },
  });
}

async function getRuns(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const query = runsListQuery(ctx);
  const page = await deps.events.listRuns(p.projectId, query);
  // The filter and sort as read, so a client sees how its q was understood.
  ctx.body = { runs: page.runs.map(runJson), next_cursor: page.next_cursor, filter: query.filter, sort: query.sort };
}

async function getRun(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const id = ctx.params.sdk_run_id!;
  const limit = intParam(ctx, "limit", 1, MAX_EVENTS) ?? DEFAULT_EVENTS;
  const after = stringParam(ctx, "after");
  const run = await deps.events.getRun(p.projectId, id);
  if (!run) throw new NotFound({ resource: "run", message: `run ${JSON.stringify(id)} not found` });
  const events = await deps.events.listEvents(p.projectId, run.run_id, { limit, after });
  const json = events.map(eventJson);
  const fit = countWithinBytes(json, MAX_EVENTS_PAGE_BYTES, jsonSize);
  ctx.body = {
    run: runJson(run),
    events: json.slice(0, fit),
    next_after: fit < events.length || events.length === limit ? events[fit - 1]!.event_id : null,
  };
}

async function getSpans(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const id = ctx.params.sdk_run_id!;
  const limit = intParam(ctx, "limit", 1, MAX_SPANS_PAGE) ?? DEFAULT_SPANS_PAGE;
  const after = stringParam(ctx, "after");
  await deps.heavyReads.run(p.projectId, async () => {
    const run = await deps.events.getRun(p.projectId, id);
    if (!run) throw new NotFound({ resource: "run", message: `run ${JSON.stringify(id)} not found` });
    // Spans pair events from anywhere in the run, so the run's span events are read (at most MAX_EVENTS_LIMIT), each
    // long value cut by the store to what a span shows.
    const spans = buildSpans(await deps.events.listSpanEvents(p.projectId, run.run_id, { limit: MAX_EVENTS_LIMIT }));
    let from = 0;
    if (after !== undefined) {
      const i = spans.findIndex((s) => s.span_id === after);
      if (i < 0) throw new ValidationError({ message: "after must be a span_id of this run (next_after of the previous page)", field: "after" });
      from = i + 1;
    }
    const page = spans.slice(from, from + limit);
    const fit = countWithinBytes(page, MAX_EVENTS_PAGE_BYTES, jsonSize);
    const more = from + fit < spans.length;
    ctx.body = { run: runJson(run), spans: page.slice(0, fit), next_after: more && fit > 0 ? page[fit - 1]!.span_id : null };
  });
}

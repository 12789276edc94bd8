/**
 * What the trace view reads of a run, shared by the API (trace-api.ts, a Bearer key) and its twins behind the
 * dashboard's session (trace-page.ts): its spans' skeletons a page at a time (trace-skeleton.ts, held in
 * trace-cache.ts), what changed after a reader's cursor, one span whole with its events and scores, and a text search
 * through its payloads (docs/API.md, "Trace").
 */
import type { Context } from "koa";
import { NotFound, ValidationError } from "../../core/errors.js";
import { isUuid, runIdFor } from "../../core/ids.js";
import type { RunRecord } from "../../core/events/run.js";
import { runJson } from "../../core/events/run-json.js";
import { buildSpans } from "../../core/events/spans.js";
import { runInputOutput, spanInputOutput } from "../../core/events/run-io.js";
import type { StoredEvent } from "../../core/ports/event-store.js";
import type { SpanSkeleton } from "../../core/events/span-skeleton.js";
import { eventsWithIds, searchRunText, spanCursor, spanCursorHolds, spanSkeletonRows, spanSkeletonRowsAfter, type SpanCursor } from "../../stores/runs/trace-rows.js";
import { listRunScores, spanScoreValues } from "../../stores/scores.js";
import { spanLogs } from "../../stores/otel-logs.js";
import { contentOfLogs } from "../../otlp/log-content.js";
import type { WebDeps } from "../deps.js";
import { intParam, stringParam } from "../api/read-api.js";
import { eventJson } from "./event-json.js";
import { linkTargets } from "./span-links.js";
import { SkeletonCache } from "./trace-cache.js";
import { buildSkeleton, type Skeleton } from "./trace-skeleton.js";

export const DEFAULT_TREE_PAGE = 1_000;
export const MAX_TREE_PAGE = 20_000;
export const MAX_SEARCH_CHARS = 200;
export const DEFAULT_SEARCH_LIMIT = 200;
export const MAX_SEARCH_LIMIT = 1_000;
/** The events of a run a run's panel shows (its start and end, errors, questions and answers). */
const RUN_EVENT_TYPES = ["run_start", "run_end", "error", "human_input_requested", "human_input_received"];
const RUN_EVENTS_SHOWN = 200;
/** The most of a span's OpenTelemetry log records its panel lists. */
const SPAN_LOGS_SHOWN = 200;

const cache = new SkeletonCache();

/**
 * The run's skeleton, from this process's cache or read (one heavy read at a time per project, web/heavy-reads.ts);
 * `at` or `started` name an earlier read the reader wants (trace-cache.ts).
 */
export function skeletonOf(deps: WebDeps, run: RunRecord, at?: string, started?: number): Promise<Skeleton> {
  return cache.get(`${run.project_id}:${run.run_id}`, run.version, at, () => deps.heavyReads.run(run.project_id, async () => {
    const ch = deps.ports.clickhouse;
    // The cursor first: what the events read after it add is sent again by the reader's next live update.
    const cursor = await spanCursor(ch, run.project_id, run.run_id);
    return buildSkeleton(await spanSkeletonRows(ch, run.project_id, run.run_id), cursor);
  }), started);
}

/** A run named by a request, read beside whatever else the request reads of it (its id is a function of its name). */
export interface RunRef {
  projectId: number;
  sdkRunId: string;
  run: Promise<RunRecord>;
  /** The run's version when the reader's page started the tree's read (run-page.ts): that read is the one it wants. */
  started?: number;
}

type SpanScores = Awaited<ReturnType<typeof spanScoreValues>>;

/** The latest values of the run's span scores, read while the run itself is. */
function scoresOf(deps: WebDeps, ref: RunRef): Promise<SpanScores> {
  const read = spanScoreValues(deps.ports.clickhouse, ref.projectId, runIdFor(ref.projectId, ref.sdkRunId));
  read.catch(() => {}); // awaited after the run: a missing run answers 404 first
  return read;
}

/** Each span with its scores' latest values, when it has any (the cached skeletons stay as they are). */
async function withScores(scores: Promise<SpanScores>, spans: readonly SpanSkeleton[]): Promise<SpanSkeleton[]> {
  const byId = await scores;
  return spans.map((s) => (byId.has(s.span_id) ? { ...s, scores: byId.get(s.span_id) } : s));
}

const iso = (ms: number) => (Number.isFinite(ms) ? new Date(ms).toISOString() : null);

/** `since` and `n` of a live reader: both or neither; a malformed one is a 422 naming it. */
function sinceOf(ctx: Context): SpanCursor | undefined {
  const since = stringParam(ctx, "since");
  if (since === undefined) return undefined;
  if (!isUuid(since)) throw new ValidationError({ message: "since must be the cursor of an earlier answer (an event id)", field: "since" });
  const n = intParam(ctx, "n", 0, Number.MAX_SAFE_INTEGER);
  if (n === undefined) throw new ValidationError({ message: "n must be given with since (the n of the same answer)", field: "n" });
  return { cursor: since.toLowerCase(), n };
}

/**
 * GET …/tree: a page of the run's span skeletons in tree order (`after`: the previous page's next_after; `at`: the
 * first page's cursor, so that later pages come from the same read while this process holds it), or with `since` and
 * `n` the spans changed after that cursor (`reset` when the reader must read the tree again).
 */
export async function treeOf(ctx: Context, deps: WebDeps, ref: RunRef): Promise<Record<string, unknown>> {
  ref.run.catch(() => {}); // a bad parameter answers before the run is awaited
  const since = sinceOf(ctx);
  const limit = intParam(ctx, "limit", 1, MAX_TREE_PAGE) ?? DEFAULT_TREE_PAGE;
  const after = stringParam(ctx, "after");
  const at = stringParam(ctx, "at");
  const scores = scoresOf(deps, ref);
  const run = await ref.run;
  if (since) return changesOf(deps, run, since, scores);
  const sk = await skeletonOf(deps, run, at, ref.started);
  let from = 0;
  if (after !== undefined) {
    // One look-up per page: a scan costs about what a map of every span would cost to build, and holds nothing.
    const i = sk.spans.findIndex((s) => s.span_id === after);
    if (i < 0) throw new ValidationError({ message: "after must be a span_id of this run (next_after of the previous page)", field: "after" });
    from = i + 1;
  }
  const page = sk.spans.slice(from, from + limit);
  const more = from + page.length < sk.spans.length;
  return {
    run: runJson(run),
    cursor: sk.cursor.cursor,
    n: sk.cursor.n,
    total: sk.spans.length,
    range: { started_at: iso(sk.range.start), ended_at: iso(sk.range.end) },
    spans: await withScores(scores, page),
    next_after: more && page.length ? page[page.length - 1]!.span_id : null,
  };
}

async function changesOf(deps: WebDeps, run: RunRecord, since: SpanCursor, scores: Promise<SpanScores>): Promise<Record<string, unknown>> {
  const ch = deps.ports.clickhouse;
  const reset = { run: runJson(run), reset: true, cursor: since.cursor, n: since.n, spans: [] };
  if (!(await spanCursorHolds(ch, run.project_id, run.run_id, since))) return reset;
  const now = await spanCursor(ch, run.project_id, run.run_id);
  if (now.cursor === since.cursor) return { run: runJson(run), reset: false, cursor: now.cursor, n: now.n, spans: [] };
  const { spans, unpaired } = await spanSkeletonRowsAfter(ch, run.project_id, run.run_id, since.cursor);
  if (unpaired) return reset;
  return { run: runJson(run), reset: false, cursor: now.cursor, n: now.n, spans: await withScores(scores, spans) };
}

/** Payload keys shown elsewhere in a span's panel than among its metadata. */
const SHOWN_KEYS = new Set([
  "phase", "kind", "node_name", "tool_name", "input", "output", "input_preview", "output_preview", "duration_ms", "error",
  "model", "provider", "prompt_tokens", "completion_tokens", "total_tokens", "cached_tokens", "reasoning_tokens", "cost_usd", "cost_source", "links",
]);
const IO_KEYS = new Set(["input", "output", "input_preview", "output_preview"]);

const without = (p: Record<string, unknown>, keys: ReadonlySet<string>) => Object.fromEntries(Object.entries(p).filter(([k]) => !keys.has(k)));

/** An event as the panels list it: its payload without the input and output they show apart. */
const listedEvent = (e: StoredEvent) => ({ ...eventJson(e), payload: without(e.payload, IO_KEYS) });

/** GET …/spans/{span_id}: one span whole — its input, output, metadata, events and scores. */
export async function spanOf(deps: WebDeps, run: RunRecord, spanId: string): Promise<Record<string, unknown>> {
  const ch = deps.ports.clickhouse;
  let events: StoredEvent[];
  if (spanId.startsWith("e:")) {
    // A span sent without a span id is named by its start event; its end is found by pairing (trace-skeleton.ts).
    const ids = (await skeletonOf(deps, run)).eventsOfSpan.get(spanId);
    events = ids ? await eventsWithIds(ch, run.project_id, run.run_id, ids) : [];
  } else {
    events = await deps.events.eventsOfSpan(run.project_id, run.run_id, spanId);
  }
  const spanEvents = events.filter((e) => e.event_type === "step" || e.event_type === "tool_call");
  const [span] = buildSpans(spanEvents, { keepParents: true });
  if (!span) throw new NotFound({ resource: "span", message: `run ${JSON.stringify(run.external_id)} has no span ${JSON.stringify(spanId)}` });
  span.span_id = spanId;
  // The span's events sent as OpenTelemetry logs (an OTLP run's id is its trace id); they may have come before it.
  const logsRead = spanLogs(ch, run.project_id, run.external_id.toLowerCase(), spanId, SPAN_LOGS_SHOWN);
  logsRead.catch(() => {});
  const { input, output } = spanInputOutput(spanEvents);
  const metadata: Record<string, unknown> = {};
  let links: unknown = [];
  for (const e of spanEvents) {
    Object.assign(metadata, without(e.payload, SHOWN_KEYS));
    if (Array.isArray(e.payload.links)) links = e.payload.links;
  }
  const scores = await listRunScores(ch, run.project_id, run.run_id, { limit: 100, newestFirst: true, spanId });
  const logs = await logsRead;
  const fromLogs = input === undefined || output === undefined ? contentOfLogs(logs) : {};
  return {
    run: runJson(run), span, input: input ?? fromLogs.input ?? null, output: output ?? fromLogs.output ?? null, metadata,
    events: events.map(listedEvent), logs, links: await linkTargets(deps, run, links), scores: scores.scores,
  };
}

/** The run's own part of its panel (the dashboard's, not the API's): its input and output, and its run-level events. */
export async function runOverview(deps: WebDeps, run: RunRecord): Promise<Record<string, unknown>> {
  const events = await deps.events.eventsOfTypes(run.project_id, run.run_id, RUN_EVENT_TYPES, RUN_EVENTS_SHOWN);
  const { input, output } = runInputOutput(events);
  return { run: runJson(run), input: input ?? null, output: output ?? null, events: events.map(listedEvent) };
}

/**
 * GET …/search?q=: the spans whose payloads hold `q` (case-insensitively, in the payload's JSON text), at most
 * `limit`; `run` says whether the run's own events (start, end, errors, questions) hold it.
 */
export async function searchOf(ctx: Context, deps: WebDeps, run: RunRecord): Promise<Record<string, unknown>> {
  const q = stringParam(ctx, "q");
  if (q === undefined || q.length > MAX_SEARCH_CHARS) throw new ValidationError({ message: `q must be text of 1 to ${MAX_SEARCH_CHARS} characters`, field: "q" });
  const limit = intParam(ctx, "limit", 1, MAX_SEARCH_LIMIT) ?? DEFAULT_SEARCH_LIMIT;
  const found = await deps.heavyReads.run(run.project_id, () => searchRunText(deps.ports.clickhouse, run.project_id, run.run_id, q, limit + 1));
  const unpaired = found.spans.some((m) => m.span_id === "");
  const sk = unpaired ? await skeletonOf(deps, run) : undefined;
  const ids = [...new Set(found.spans.map((m) => m.span_id || sk?.spanOfEvent.get(m.event_id) || "").filter(Boolean))];
  return { spans: ids.slice(0, limit), run: found.run, more: ids.length > limit };
}

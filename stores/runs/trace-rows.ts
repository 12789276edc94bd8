/**
 * What the trace view reads of a run's span events (ClickHouse): each span's skeleton, made by SQL from what
 * core/events/spans.ts takes of its first start and first end event (phase, kind, names, parents, times, duration, an
 * error's presence, model, tokens, cost) — so a run of 100,000 spans is read as 100,000 short rows, not as 200,000
 * payloads, and laid out as they come (a third of the CPU of reading the events' fields and pairing them in JS); the same for the spans with events after a cursor, for a live page; a text search through the
 * payloads; events by id. Events sent without a span id are read one by one, since they pair by name (in JS).
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { StoredEvent } from "../../core/ports/event-store.js";
import type { SpanSkeleton } from "../../core/events/span-skeleton.js";
import { TimeSlice } from "../../core/time-slice.js";
import { decodeEvent, EVENT_SELECT, SPAN_EVENT_SELECT } from "./event-store.js";

const RUN_SPAN_EVENTS = "project_id = {project:UInt64} AND run_id = {run:UUID} AND event_type IN ('step', 'tool_call')";

/**
 * The fields of a span event's payload a row is built from, in one parse of its (cut) payload. Ingest types them
 * (core/events/schema.ts), so a typed extraction reads what core/events/spans.ts reads; an error, which is not typed,
 * counts unless it is null, "" or false (errorOf).
 */
const FIELDS = `JSONExtract(if(span_payload = '', payload, span_payload), 'Tuple(phase String, kind String, node_name String, tool_name String,
  duration_ms Nullable(Float64), error Nullable(String), model String, total_tokens Nullable(Float64), prompt_tokens Nullable(Float64),
  completion_tokens Nullable(Float64), cost_usd Nullable(Float64))')`;

/**
 * The skeleton of each span sent with a span id, made by SQL from the span's first start event (s*) and first end
 * event (e*) as core/events/spans.ts makes a span of them: the start's name, kind and parent (the end's when the start
 * has none, or is missing), the end's duration (else end − start), status, model, tokens and cost (an LLM call's); a
 * span sent only as its end starts its duration before it. Numbers leave as Float64 (JSON numbers: 64-bit integers
 * would be quoted). `first`: the span's first event in processing order, which orders spans that start together.
 */
const SPAN_ROWS = (where: string) => `
  SELECT id AS span_id, nullIf(parent, '') AS parent_span_id, name, kind,
    if(he, if(e, 'error', 'ok'), 'running') AS status,
    fromUnixTimestamp64Milli(if(he AND given IS NOT NULL AND base_at = ea, ea - toInt64(given), base_at), 'UTC') AS started_at,
    if(he, toFloat64(ifNull(given, greatest(0, ea - base_at))), NULL) AS duration_ms,
    if(llm AND md != '', md, NULL) AS model,
    if(llm, ifNull(tt, if(pt IS NULL AND ct IS NULL, NULL, ifNull(pt, 0) + ifNull(ct, 0))), NULL) AS tokens,
    if(llm, c, NULL) AS cost_usd, first
  FROM (
    SELECT span_id AS id, min(eid) AS first, max(st) AS hs, max(NOT st) AS he,
      anyIf(at, st) AS sa, anyIf(at, NOT st) AS ea, if(hs, sa, ea) AS base_at,
      if(hs, if(anyIf(parent, st) != '', anyIf(parent, st), if(he, anyIf(parent, NOT st), '')), anyIf(parent, NOT st)) AS parent,
      if(if(hs, anyIf(tool, st), anyIf(tool, NOT st)), 'tool', if(if(hs, anyIf(m.kind, st), anyIf(m.kind, NOT st)) AS k != '', k, 'step')) AS kind,
      if(hs, anyIf(if(tool, m.tool_name, m.node_name), st), anyIf(if(tool, m.tool_name, m.node_name), NOT st)) AS name,
      kind = 'llm' AND he AS llm,
      anyIf(m.duration_ms, NOT st) AS given, anyIf(m.error IS NOT NULL AND m.error NOT IN ('', 'false'), NOT st) AS e,
      anyIf(m.model, NOT st) AS md, anyIf(m.total_tokens, NOT st) AS tt, anyIf(m.prompt_tokens, NOT st) AS pt,
      anyIf(m.completion_tokens, NOT st) AS ct, anyIf(m.cost_usd, NOT st) AS c
    FROM (
      SELECT toString(event_id) AS eid, event_type = 'tool_call' AS tool, span_id, parent_span_id AS parent, toUnixTimestamp64Milli(occurred_at) AS at,
        ${FIELDS} AS m, m.phase = 'start' AS st
      FROM agent_events WHERE ${RUN_SPAN_EVENTS} AND span_id != '' AND ${where}
      ORDER BY eid LIMIT 1 BY span_id, st
    )
    GROUP BY span_id
  )`;

/** A skeleton's fields, in the order SPAN_COLUMNS sends them. */
const COLUMNS = ["span_id", "parent_span_id", "name", "kind", "status", "started_at", "duration_ms", "model", "tokens", "cost_usd"] as const;
/** Spans per answered row. */
export const SPANS_PER_ROW = 8192;

/**
 * SPAN_ROWS in start order (ties: processing order), as columns: each answered row holds `perRow` spans, one array per
 * field, the rows in order. 100,000 skeletons parse from a dozen rows of arrays in a fraction of the time 100,000 rows
 * of ten keys took (docs/BENCHMARKS.md, "Trace view"), and the event loop turns between rows.
 */
const SPAN_COLUMNS = (where: string, perRow = SPANS_PER_ROW) => `
  SELECT ${COLUMNS.map((c, i) => `arrayMap(r -> r.${i + 2}, g) AS ${c}`).join(", ")}
  FROM (
    SELECT intDiv(rn - 1, ${Math.max(1, Math.floor(perRow))}) AS chunk, arraySort(groupArray((rn, ${COLUMNS.join(", ")}))) AS g
    FROM (SELECT *, row_number() OVER (ORDER BY started_at, first) AS rn FROM (${SPAN_ROWS(where)}))
    GROUP BY chunk
  )
  ORDER BY chunk`;

type ColumnRow = { [K in (typeof COLUMNS)[number]]: unknown[] };

/** The events sent without a span id, each whole but for its payload's long values (they pair by name, in JS). */
const UNPAIRED = (where: string) => `
  SELECT ${SPAN_EVENT_SELECT} FROM agent_events WHERE ${RUN_SPAN_EVENTS} AND span_id = '' AND ${where}
  ORDER BY toString(event_id) LIMIT 1 BY event_id`;

/**
 * The skeletons of SPAN_COLUMNS' rows, in order (DateTime64 leaves as ISO text with three decimals,
 * core/clickhouse/settings.ts, as an event's occurred_at does).
 */
async function skeletons(rows: readonly ColumnRow[], slice = new TimeSlice()): Promise<SpanSkeleton[]> {
  const out: SpanSkeleton[] = [];
  for (const r of rows) {
    const [id, parent, name, kind, status, started, duration, model, tokens, cost] = COLUMNS.map((c) => r[c]);
    for (let i = 0; i < id!.length; i++) {
      out.push({
        span_id: id![i] as string, parent_span_id: parent![i] as string | null, name: name![i] as string, kind: kind![i] as string,
        status: status![i] as SpanSkeleton["status"], started_at: started![i] as string, duration_ms: duration![i] as number | null,
        model: model![i] as string | null, tokens: tokens![i] as number | null, cost_usd: cost![i] as number | null,
      });
    }
    if (slice.due()) await slice.next();
  }
  return out;
}

/** Where a reader of a run's span events stands: the newest event id read, and how many distinct events up to it. */
export interface SpanCursor {
  readonly cursor: string;
  readonly n: number;
}

/** The cursor of a run without span events: below every event id. */
export const NO_SPAN_EVENTS = "00000000-0000-0000-0000-000000000000";

/** The newest span event of a run and the count of its span events: read before the events it stands for. */
export async function spanCursor(ch: ClickHouse, projectId: number, runId: string): Promise<SpanCursor> {
  const [row] = await ch.query<{ c: string; n: string | number }>(
    `SELECT max(toString(event_id)) AS c, uniqExact(event_id) AS n FROM agent_events WHERE ${RUN_SPAN_EVENTS}`,
    { project: projectId, run: runId },
  );
  return { cursor: row?.c || NO_SPAN_EVENTS, n: Number(row?.n ?? 0) };
}

/**
 * Whether the run's span events up to `since.cursor` are still the `since.n` a reader saw: an event stored late, with
 * an id below the cursor, makes them differ (the reader then reads the run again).
 */
export async function spanCursorHolds(ch: ClickHouse, projectId: number, runId: string, since: SpanCursor): Promise<boolean> {
  const [row] = await ch.query<{ n: string | number }>(
    `SELECT uniqExact(event_id) AS n FROM agent_events WHERE ${RUN_SPAN_EVENTS} AND toString(event_id) <= {cursor:String}`,
    { project: projectId, run: runId, cursor: since.cursor },
  );
  return Number(row?.n ?? 0) === since.n;
}

/** What a run's spans are built from: the skeletons of those sent with span ids (start order), and the span events sent without. */
export interface SkeletonRead {
  spans: SpanSkeleton[];
  unpaired: StoredEvent[];
}

/** `perRow`: spans per answered row (SPANS_PER_ROW; less in tests, to see the order kept across rows). */
export async function spanSkeletonRows(ch: ClickHouse, projectId: number, runId: string, perRow = SPANS_PER_ROW): Promise<SkeletonRead> {
  const params = { project: projectId, run: runId };
  const [rows, unpaired] = await Promise.all([ch.query<ColumnRow>(SPAN_COLUMNS("1", perRow), params), ch.query<Record<string, unknown>>(UNPAIRED("1"), params)]);
  return { spans: await skeletons(rows), unpaired: unpaired.map(decodeEvent) };
}

/**
 * The rows (as spanSkeletonRows) of the spans with an event after `cursor`, and whether a span event without a span
 * id came after it (those pair by name across the run: the reader must read the run whole).
 */
export async function spanSkeletonRowsAfter(ch: ClickHouse, projectId: number, runId: string, cursor: string): Promise<{ spans: SpanSkeleton[]; unpaired: boolean }> {
  const params = { project: projectId, run: runId, cursor };
  const after = "toString(event_id) > {cursor:String}";
  const [rows, unpaired] = await Promise.all([
    ch.query<ColumnRow>(SPAN_COLUMNS(`span_id IN (SELECT span_id FROM agent_events WHERE ${RUN_SPAN_EVENTS} AND span_id != '' AND ${after})`), params),
    ch.query<{ n: unknown }>(`SELECT count() AS n FROM agent_events WHERE ${RUN_SPAN_EVENTS} AND span_id = '' AND ${after}`, params),
  ]);
  return { spans: await skeletons(rows), unpaired: Number(unpaired[0]?.n ?? 0) > 0 };
}

/** What a text search of a run's payloads found: a span's id, or for an event sent without one, the event's id. */
export interface TextMatch {
  readonly span_id: string;
  readonly event_id: string;
}

/**
 * The span events (and events naming a span) of a run whose payload holds `text`, case-insensitively, in the
 * payload's JSON text; at most `limit` spans, in processing order of their first matching event. `run` says whether
 * an event of the run itself (its start, end, errors, questions, without a span) holds it.
 */
export async function searchRunText(ch: ClickHouse, projectId: number, runId: string, text: string, limit: number): Promise<{ spans: TextMatch[]; run: boolean }> {
  const rows = await ch.query<{ s: string; e: string }>(
    `SELECT span_id AS s, if(span_id = '', toString(event_id), '') AS e
     FROM agent_events
     WHERE project_id = {project:UInt64} AND run_id = {run:UUID} AND positionCaseInsensitiveUTF8(payload, {text:String}) > 0
     ORDER BY toString(event_id)
     LIMIT 1 BY s, e
     LIMIT {take:UInt32}`,
    { project: projectId, run: runId, text, take: limit + 1 },
  );
  let run = false;
  const spans: TextMatch[] = [];
  const types = new Map<string, string>();
  if (rows.some((r) => r.s === "")) {
    // Events without a span id: those of a step or tool call are spans ("e:<id>"), the others the run's own.
    const ids = rows.filter((r) => r.s === "").map((r) => r.e);
    for (const r of await ch.query<{ e: string; t: string }>(
      `SELECT DISTINCT toString(event_id) AS e, event_type AS t FROM agent_events
       WHERE project_id = {project:UInt64} AND run_id = {run:UUID} AND event_id IN {ids:Array(UUID)}`,
      { project: projectId, run: runId, ids },
    )) types.set(r.e, r.t);
  }
  for (const r of rows) {
    if (r.s !== "") spans.push({ span_id: r.s, event_id: "" });
    else if (types.get(r.e) === "step" || types.get(r.e) === "tool_call") spans.push({ span_id: "", event_id: r.e });
    else run = true;
  }
  return { spans: spans.slice(0, limit), run };
}

/** Events of a run by id, whole, in processing order (at most 100). */
export async function eventsWithIds(ch: ClickHouse, projectId: number, runId: string, ids: readonly string[]): Promise<StoredEvent[]> {
  if (ids.length === 0) return [];
  const rows = await ch.query<Record<string, unknown>>(
    `SELECT ${EVENT_SELECT} FROM agent_events
     WHERE project_id = {project:UInt64} AND run_id = {run:UUID} AND event_id IN {ids:Array(UUID)}
     ORDER BY toString(event_id) LIMIT 1 BY event_id LIMIT 100`,
    { project: projectId, run: runId, ids: ids.slice(0, 100) },
  );
  return rows.map(decodeEvent);
}

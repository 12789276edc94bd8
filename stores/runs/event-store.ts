/**
 * All SQL for events and runs, shared by the chDB and server transports (see docs/STORAGE.md).
 *
 * Reads never show a duplicate or an old version:
 * - runs: `FINAL` on agent_runs (ReplacingMergeTree(version)), except loadRuns and listRuns, which pick the newest
 *   version themselves (see loadRuns, and run-list.ts: candidates read without FINAL, then their latest versions).
 *   Lookups hit the primary key. docs/STORAGE.md, "How reads dedupe".
 * - events: `LIMIT 1 BY event_id` within one run (a run's key range is small, so this is cheap).
 *
 * Event order: ClickHouse compares UUIDs by their low 64 bits first, so `ORDER BY event_id` does NOT
 * follow UUIDv7 time order. Events are ordered by `toString(event_id)` (canonical lower-case hex, whose
 * lexicographic order is the byte order that UUIDv7 is designed for).
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { canonicalIso } from "../../core/events/iso-time.js";
import { ERROR_PREVIEW_CHARS } from "../../core/events/spans.js";
import { mapInSlices } from "../../core/time-slice.js";
import type { EventType, LoggedEvent, RunStatus } from "../../core/events/schema.js";
import type { RunRecord } from "../../core/events/run.js";
import { runKeyOfRun } from "../../core/events/run-key.js";
import { ValidationError } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import { jsonString, jsonValue } from "../../core/json-text.js";
import { checkLimit, toChTime } from "./run-query.js";
import { listRunsPage } from "./run-list.js";
import { encodeLines, encodeLinesInSlices } from "../../core/clickhouse/settings.js";
import type { EventStore, RunFilter, StoredEvent } from "../../core/ports/event-store.js";

// Re-exported: the alerts, scores and retention queries take them from here.
export { toChTime } from "./run-query.js";

export { DEFAULT_RUNS_LIMIT, MAX_RUNS_LIMIT } from "./run-list.js";
export const DEFAULT_EVENTS_LIMIT = 10_000;
export const MAX_EVENTS_LIMIT = 100_000;
/** Keys per loadRuns query (query parameters travel in the URL on the HTTP transport). */
const LOAD_CHUNK = 1000;


export const RUN_COLUMNS = [
  "project_id", "user_id", "external_id", "run_id", "agent_name", "status", "status_at", "started_at", "ended_at",
  "last_event_at", "model", "prompt_tokens", "completion_tokens", "total_tokens", "cost_usd", "cost_source",
  "framework", "config_version", "event_count", "error_count", "last_error", "pending_question", "llm_calls", "models", "session_id",
  "experiment_id", "dataset_item_id", "repetition", "tags", "metadata", "end_user", "environment", "release", "input_preview",
  "output_preview", "version",
] as const satisfies readonly (keyof RunRecord)[];
export const RUN_SELECT = RUN_COLUMNS.join(", ");

export const EVENT_SELECT =
  "event_id, run_id, sdk_run_id, event_type, agent_name, payload, occurred_at, received_at, config_version, span_id, parent_span_id";

/**
 * The longest payload value a span event is read with (listSpanEvents): one more than the span's longest preview
 * (ERROR_PREVIEW_CHARS), so the span still shows that its error was cut.
 */
export const SPAN_VALUE_CHARS = ERROR_PREVIEW_CHARS + 1; // written into migrations/130_span_payload.sql

/** The payload with every top-level value longer than SPAN_VALUE_CHARS cut: the column span_payload (migration 130) when it is set. */
const SPAN_PAYLOAD = "if(span_payload = '', payload, span_payload)";
export const SPAN_EVENT_SELECT = EVENT_SELECT.replace("payload", `${SPAN_PAYLOAD} AS payload`);


type Raw = Record<string, unknown>;
const num = (v: unknown): number => (typeof v === "number" ? v : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** The agent_events columns of eventRowLine's values, in their order. */
const EVENT_COLUMNS = [
  "event_id", "project_id", "user_id", "run_id", "sdk_run_id", "event_type", "agent_name", "payload", "occurred_at", "received_at",
  "config_version", "span_id", "parent_span_id", "search_text",
] as const;

/**
 * One agent_events row as a line of JSONCompactEachRow (EVENT_COLUMNS). The payload goes in as the JSON object it is:
 * ClickHouse reads an object into the String column as its text (input_format_json_read_objects_as_strings,
 * settings.ts), so the payload is serialised once instead of serialised and then escaped again as a string inside
 * the row (a large share of the pipeline thread's JSON work for events with LLM messages). A payload that is not an
 * object (a foreign record) goes in as a string, as before. The other values are written one by one
 * (core/json-text.ts), sooner than JSON.stringify calls per value or over arrays of them (docs/BENCHMARKS.md, "Pipeline
 * thread, per span"). Times go in as canonical ISO 8601, which ClickHouse reads with date_time_input_format=best_effort
 * (settings.ts).
 */
export function eventRowLine(e: LoggedEvent, payloadJson?: string, searchText = ""): string {
  const p = e.payload as unknown;
  const payload = typeof p === "object" && p !== null && !Array.isArray(p) ? (payloadJson ?? JSON.stringify(p)) : JSON.stringify(JSON.stringify(p));
  return (
    `[${jsonString(e.event_id)},${jsonValue(e.project_id)},${jsonValue(e.user_id)},${jsonString(e.run_id)},${jsonString(e.sdk_run_id)},${jsonString(e.event_type)}` +
    `,${jsonString(e.agent_name ?? "")},${payload},"${canonicalIso(e.occurred_at)}","${canonicalIso(e.received_at)}"` +
    `,${jsonValue(e.config_version)},${jsonString(e.span_id ?? "")},${jsonString(e.parent_span_id ?? "")},${jsonString(searchText)}]\n`
  );
}

/** A DateTime64 value of a row line: `YYYY-MM-DD hh:mm:ss.sss` in quotes, or null. */
const chTimeValue = (iso: string | null): string => (iso === null ? "null" : `"${toChTime(iso)}"`);

/**
 * One agent_runs row as a line of JSONCompactEachRow (RUN_COLUMNS, in their order), written value by value like
 * eventRowLine. A part of OTLP traces spread over exports touches ~2,000 runs: an object per run (its times
 * converted) and a look at every key of every row for the columns cost more (docs/BENCHMARKS.md, "Pipeline thread, per
 * span"). Every value goes through jsonValue, as the rows given as objects did (core/clickhouse/settings.ts
 * compactRowLine).
 */
export function runRowLine(r: RunRecord): string {
  return `[${jsonValue(r.project_id)},${jsonValue(r.user_id)},${jsonValue(r.external_id)},${jsonValue(r.run_id)},${jsonValue(r.agent_name)},${jsonValue(r.status)}` +
    `,${chTimeValue(r.status_at)},${chTimeValue(r.started_at)},${chTimeValue(r.ended_at)},${chTimeValue(r.last_event_at)}` +
    `,${jsonValue(r.model)},${jsonValue(r.prompt_tokens)},${jsonValue(r.completion_tokens)},${jsonValue(r.total_tokens)}` +
    `,${jsonValue(r.cost_usd)},${jsonValue(r.cost_source)},${jsonValue(r.framework)},${jsonValue(r.config_version)}` +
    `,${jsonValue(r.event_count)},${jsonValue(r.error_count)},${jsonValue(r.last_error)},${jsonValue(r.pending_question)}` +
    `,${jsonValue(r.llm_calls)},${r.models.length === 0 ? "[]" : JSON.stringify(r.models)},${jsonValue(r.session_id)},${jsonValue(r.experiment_id)},${jsonValue(r.dataset_item_id)},${jsonValue(r.repetition)}` +
    `,${r.tags.length === 0 ? "[]" : JSON.stringify(r.tags)},${metadataJson(r.metadata)},${jsonValue(r.end_user)},${jsonValue(r.environment)}` +
    `,${jsonValue(r.release)},${jsonValue(r.input_preview)},${jsonValue(r.output_preview)}` +
    `,${jsonValue(r.version)}]\n`;
}

/** The metadata map as a JSON object (a Map(String, String) value); most runs have none. */
function metadataJson(m: Readonly<Record<string, string>>): string {
  for (const _ in m) return JSON.stringify(m);
  return "{}";
}

const stringList = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

/** A Map(String, String) as JSONEachRow gives it: an object (null-prototype, so any key is a plain key). */
function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  if (typeof v === "object" && v !== null && !Array.isArray(v)) for (const [k, x] of Object.entries(v)) out[k] = String(x);
  return out;
}

/**
 * What run_costs keeps of a run version (migration 050): its version and cost facts (costFacts, in its order). A line,
 * like runRowLine; its values are costFacts' own, so the row written is what the pipeline compares (pipeline/run-writer.ts).
 */
export const COST_COLUMNS = [
  "version", "project_id", "user_id", "external_id", "day", "agent_name", "model", "status", "prompt_tokens", "completion_tokens",
  "total_tokens", "cost_usd", "cost_source",
] as const;
export function costRowLine(r: RunRecord): string {
  let line = `[${jsonValue(r.version)}`;
  for (const v of Object.values(costFacts(r))) line += `,${jsonValue(v)}`;
  return `${line}]\n`;
}

/**
 * The cost facts of a run: what its run_costs row says apart from the version, on the UTC day of its start (or of its
 * last event while the run_start has not arrived).
 */
export function costFacts(r: RunRecord) {
  return {
    project_id: r.project_id,
    user_id: r.user_id,
    external_id: r.external_id,
    day: canonicalIso(r.started_at ?? r.last_event_at).slice(0, 10),
    agent_name: r.agent_name,
    model: r.model,
    status: r.status,
    prompt_tokens: r.prompt_tokens,
    completion_tokens: r.completion_tokens,
    total_tokens: r.total_tokens,
    cost_usd: r.cost_usd,
    cost_source: r.cost_source,
  };
}

export function decodeRun(r: Raw): RunRecord {
  return {
    project_id: num(r.project_id),
    user_id: num(r.user_id),
    external_id: String(r.external_id),
    run_id: String(r.run_id),
    agent_name: String(r.agent_name),
    status: r.status as RunStatus,
    status_at: String(r.status_at),
    started_at: strOrNull(r.started_at),
    ended_at: strOrNull(r.ended_at),
    last_event_at: String(r.last_event_at),
    model: String(r.model),
    prompt_tokens: num(r.prompt_tokens),
    completion_tokens: num(r.completion_tokens),
    total_tokens: num(r.total_tokens),
    cost_usd: num(r.cost_usd),
    cost_source: r.cost_source as RunRecord["cost_source"],
    framework: String(r.framework),
    config_version: numOrNull(r.config_version),
    event_count: num(r.event_count),
    error_count: num(r.error_count),
    last_error: String(r.last_error),
    pending_question: String(r.pending_question),
    llm_calls: num(r.llm_calls ?? 0),
    models: stringList(r.models),
    session_id: String(r.session_id ?? ""),
    experiment_id: String(r.experiment_id ?? ""),
    dataset_item_id: String(r.dataset_item_id ?? ""),
    repetition: num(r.repetition ?? 0),
    tags: stringList(r.tags),
    metadata: stringMap(r.metadata),
    end_user: String(r.end_user ?? ""),
    environment: String(r.environment ?? ""),
    release: String(r.release ?? ""),
    input_preview: String(r.input_preview ?? ""),
    output_preview: String(r.output_preview ?? ""),
    version: num(r.version),
  };
}

export function decodeEvent(r: Raw): StoredEvent {
  let payload: Record<string, unknown>;
  try {
    payload = JSON.parse(String(r.payload)) as Record<string, unknown>;
  } catch {
    payload = { _unparsed: String(r.payload) };
  }
  return {
    event_id: String(r.event_id),
    run_id: String(r.run_id),
    sdk_run_id: String(r.sdk_run_id),
    event_type: r.event_type as EventType,
    agent_name: String(r.agent_name),
    payload,
    occurred_at: String(r.occurred_at),
    received_at: String(r.received_at),
    config_version: numOrNull(r.config_version),
    span_id: String(r.span_id ?? ""),
    parent_span_id: String(r.parent_span_id ?? ""),
  };
}

export function createEventStore(ch: ClickHouse): EventStore {
  /** A run's events whole that match `where`, in processing order, at most `limit`. */
  const wholeEvents = async (projectId: number, runId: string, where: string, params: Record<string, unknown>, limit: number) =>
    (await ch.query<Raw>(
      `SELECT ${EVENT_SELECT} FROM agent_events WHERE project_id = {project_id:UInt64} AND run_id = {run_id:UUID} AND ${where}
       ORDER BY toString(event_id) LIMIT 1 BY event_id LIMIT {take:UInt32}`,
      { project_id: projectId, run_id: runId, take: limit, ...params },
    )).map(decodeEvent);
  return {
    async insertEvents(events, payloadJson, searchText) {
      if (events.length === 0) return;
      // In time slices: a pipeline batch holds thousands of events and may share the event loop with ingest.
      const bytes = await encodeLinesInSlices(events, (e) => eventRowLine(e, payloadJson?.get(e), searchText?.get(e)));
      await ch.insertEncoded("agent_events", { columns: EVENT_COLUMNS, bytes });
    },

    async upsertRuns(runs, costs = runs) {
      // Two inserts at once: each is mostly a part written to disk, and chDB runs them side by side.
      // The rows are made at once, before the first wait: once this call has returned its promise, the pipeline lets
      // the next part change the same run records (pipeline/run-writer.ts write). Lines kept as strings until a later
      // slice cost more than the lines themselves (docs/BENCHMARKS.md, "Pipeline thread, per span").
      const runRows = runs.length > 0 ? encodeLines(runs, runRowLine) : undefined;
      const costRows = costs.length > 0 ? encodeLines(costs, costRowLine) : undefined;
      await Promise.all([
        runRows && ch.insertEncoded("agent_runs", { columns: RUN_COLUMNS, bytes: runRows }),
        costRows && ch.insertEncoded("run_costs", { columns: COST_COLUMNS, bytes: costRows }),
      ]);
    },

    async loadRuns(keys) {
      const latest = new Map<string, RunRecord>();
      for (let i = 0; i < keys.length; i += LOAD_CHUNK) {
        const chunk = keys.slice(i, i + LOAD_CHUNK);
        const wanted = new Set(chunk.map((k) => runKeyOfRun(k)));
        // Every stored version of the keys, without FINAL: the key columns are read first (PREWHERE), and the rest
        // only where a key matched, so runs that are not stored yet (most of the pipeline's look-ups: new runs, new
        // OTLP traces) cost a read of the keys alone. FINAL merged every column of every granule the keys fell in, at
        // twice the time (docs/BENCHMARKS.md, "ClickHouse calls"). The newest version is picked here, as FINAL would:
        // the pipeline's version clock gives each write of a run a higher version. Two IN lists (the project_id minmax
        // and external_id bloom filter indexes skip granules); the exact pairs are picked below.
        const rows = await ch.query<Raw>(
          `SELECT ${RUN_SELECT} FROM agent_runs
           WHERE project_id IN {projects:Array(UInt64)} AND external_id IN {ids:Array(String)}`,
          { projects: [...new Set(chunk.map((k) => k.project_id))], ids: [...new Set(chunk.map((k) => k.external_id))] },
        );
        for (const r of rows) {
          const run = decodeRun(r);
          const key = runKeyOfRun(run);
          if (!wanted.has(key)) continue;
          const seen = latest.get(key);
          if (!seen || run.version > seen.version) latest.set(key, run);
        }
      }
      return [...latest.values()];
    },

    async getRun(projectId, externalId) {
      const rows = await ch.query<Raw>(
        `SELECT ${RUN_SELECT} FROM agent_runs FINAL
         WHERE project_id = {project_id:UInt64} AND external_id = {external_id:String} LIMIT 1`,
        { project_id: projectId, external_id: externalId },
      );
      return rows[0] ? decodeRun(rows[0]) : undefined;
    },

    // In three small reads rather than one FINAL over the project: run-list.ts.
    listRuns: (projectId, query: RunFilter) => listRunsPage(ch, projectId, query, RUN_SELECT, decodeRun),

    async listEvents(projectId, runId, opts = {}) {
      const limit = checkLimit(opts.limit, DEFAULT_EVENTS_LIMIT, MAX_EVENTS_LIMIT);
      const params: Record<string, unknown> = { project_id: projectId, run_id: runId, take: limit };
      let after = "";
      if (opts.after !== undefined) {
        if (!isUuid(opts.after)) throw new ValidationError({ message: "after must be an event_id", field: "after" });
        after = "AND toString(event_id) > {after:String}";
        params.after = opts.after.toLowerCase();
      }
      const rows = await ch.query<Raw>(
        `SELECT ${EVENT_SELECT} FROM agent_events
         WHERE project_id = {project_id:UInt64} AND run_id = {run_id:UUID} ${after}
         ORDER BY toString(event_id)
         LIMIT 1 BY event_id
         LIMIT {take:UInt32}`,
        params,
      );
      return mapInSlices(rows, decodeEvent);
    },

    async listSpanEvents(projectId, runId, opts = {}) {
      const limit = checkLimit(opts.limit, DEFAULT_EVENTS_LIMIT, MAX_EVENTS_LIMIT);
      const rows = await ch.query<Raw>(
        `SELECT ${SPAN_EVENT_SELECT} FROM agent_events
         WHERE project_id = {project_id:UInt64} AND run_id = {run_id:UUID} AND event_type IN ('step', 'tool_call')
         ORDER BY toString(event_id)
         LIMIT 1 BY event_id
         LIMIT {take:UInt32}`,
        { project_id: projectId, run_id: runId, take: limit },
      );
      return mapInSlices(rows, decodeEvent);
    },

    eventsOfSpan: (projectId, runId, spanId) => wholeEvents(projectId, runId, "span_id = {span_id:String}", { span_id: spanId }, 100),

    eventsOfTypes: (projectId, runId, types, limit) =>
      wholeEvents(projectId, runId, "event_type IN {types:Array(String)}", { types: [...types] }, checkLimit(limit, limit, MAX_EVENTS_LIMIT)),
  };
}

import type { EventType, LoggedEvent } from "../events/schema.js";
import type { RunRecord } from "../events/run.js";
import type { RunsFilter, RunsSort } from "../runs-filter/index.js";

/** An event as read back from agent_events. */
export interface StoredEvent {
  event_id: string;
  run_id: string;
  sdk_run_id: string;
  event_type: EventType;
  agent_name: string;
  payload: Record<string, unknown>;
  occurred_at: string;
  received_at: string;
  config_version: number | null;
  /** "" when the event was sent without one. */
  span_id: string;
  parent_span_id: string;
}

/**
 * A page of the runs list: `filter` (core/runs-filter) in `sort` order. The older fields below still narrow it
 * (each one as its RunsFilter field: status, agent, session, from, config_version, score), for callers that name
 * them; a run is listed when it matches all of them.
 */
export interface RunFilter {
  filter?: RunsFilter;
  /** Default: start time, newest first. */
  sort?: RunsSort;
  status?: RunRecord["status"];
  agent_name?: string;
  /** Runs of this session (a run's session_id is set by its first event that names one). */
  session_id?: string;
  /** ISO timestamp: runs whose last event is at or after it. */
  since?: string;
  config_version?: number;
  /** Runs with a score of this name (docs/API.md, Scores): any value, or with score_min / score_max a number or boolean (1/0) within them. */
  score_name?: string;
  score_min?: number;
  score_max?: number;
  /** Only these runs (their sdk_run_ids): a caller that learnt of some runs elsewhere asks which of them match. */
  external_ids?: readonly string[];
  /** Opaque cursor returned as next_cursor by the previous page of the same sort. */
  cursor?: string;
  /** 1..500, default 50. */
  limit?: number;
}

/**
 * Repository over the ClickHouse transport: the SQL for events and runs, shared by chDB and server adapters.
 * Implemented by createEventStore(ch) in stores/runs/event-store.ts.
 */
export interface EventStore {
  /**
   * Idempotent on event_id (ReplacingMergeTree + dedup on read): replays after a crash store nothing twice.
   * `payloadJson` may give events' payloads already serialised (JSON.stringify of the payload as it is now), so that
   * the pipeline serialises each payload once for the row and the live frame. `searchText` gives events the text
   * free-text search finds their run by (pipeline/search-text.ts); an event without one has none.
   */
  insertEvents(events: readonly LoggedEvent[], payloadJson?: ReadonlyMap<LoggedEvent, string>, searchText?: ReadonlyMap<LoggedEvent, string>): Promise<void>;
  /**
   * Writes full run rows (the highest `version` per run wins) and the cost rows (run_costs) of
   * `costs`: by default every run written; the pipeline passes only the runs whose cost facts changed. The rows are
   * made from the records before the call returns: the caller may change the records while the write is under way.
   */
  upsertRuns(runs: readonly RunRecord[], costs?: readonly RunRecord[]): Promise<void>;
  /** Latest version of each requested run (missing ones are absent), for the pipeline's state. */
  loadRuns(keys: readonly { project_id: number; external_id: string }[]): Promise<RunRecord[]>;
  /** Every read below is scoped by the project: another project's run or event is never found. */
  getRun(projectId: number, externalId: string): Promise<RunRecord | undefined>;
  /**
   * The project's runs matching the filter, in its sort (default newest first: by started_at, then external_id),
   * cursor-paginated; the LLM judge's and experiments' runs only when the filter asks for them
   * (stores/runs/runs-filter-sql.ts).
   */
  listRuns(projectId: number, filter: RunFilter): Promise<{ runs: RunRecord[]; next_cursor: string | null }>;
  /** A run's events in processing order (event_id is a UUIDv7 minted at ingest). */
  listEvents(projectId: number, runId: string, opts?: { limit?: number; after?: string }): Promise<StoredEvent[]>;
  /**
   * What a run's spans are built from (core/events/spans.ts): its step and tool_call events in processing order,
   * each payload value longer than SPAN_VALUE_CHARS cut by the store — a string to its first characters, an object
   * or array to the first characters of its JSON, as a string — so a run of 20,000 spans with 10 KiB errors is read
   * as tens of MiB, not hundreds.
   */
  listSpanEvents(projectId: number, runId: string, opts?: { limit?: number }): Promise<StoredEvent[]>;
  /** One span's events whole (its start and end, and any other event naming it), in processing order. */
  eventsOfSpan(projectId: number, runId: string, spanId: string): Promise<StoredEvent[]>;
  /** A run's events of the given types whole, in processing order, at most `limit` (the run_start and run_end an evaluator reads). */
  eventsOfTypes(projectId: number, runId: string, types: readonly string[], limit: number): Promise<StoredEvent[]>;
}

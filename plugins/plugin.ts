/**
 * The pipeline plugin interface. A plugin is one module whose default export (or `plugin` export) is a Plugin,
 * or a factory `(ctx) => Plugin`. The pipeline runs the chain for every batch it takes from the event log:
 *
 *   for each event, in log order:   plugin.onEvent(event, run, batch)   for every plugin, in chain order
 *   store the batch's events:        agent_events (ClickHouse)
 *   then, together:                  the changed agent_runs rows, and
 *                                    plugin.afterEventsStored(batch)     for every plugin, concurrently
 *                                    (broadcast, llm_calls and scores rows, agent counters)
 *   once per batch:                  plugin.afterCommit(batch)           for every plugin, concurrently
 *   commit the log offset
 *
 * Delivery is at-least-once: after a crash or a failed hook the same batch is processed again (storage dedups on
 * event_id). So afterCommit side effects must be idempotent or tolerate a repeat (a repeated broadcast is
 * harmless; a counter needs a dedup key, see cost-aggregation.ts). A hook that throws fails the whole batch,
 * which is retried with backoff; it is never skipped. Keep onEvent synchronous and cheap: no I/O per event.
 *
 * See plugins/README.md for a walk-through and plugins/examples/ for a complete plugin with its test.
 */
import type { RunRecord } from "../core/events/run.js";
import type { PipelineEvent } from "../core/events/schema.js";
import type { PipelineContext } from "../core/pipeline-context.js";

export type { PipelineEvent };

/** What a plugin may use: the ports, the config, a logger and the event store. Given to init(). */
export type PluginContext = PipelineContext;

/**
 * The pipeline's working copy of one run during a batch. Plugins change `run` in place; the runner writes
 * a new agent_runs row (with a higher version) for every run whose draft changed in the batch.
 */
export interface RunDraft {
  /** The run as it will be stored. Mutate its fields; `version` is assigned by the runner. */
  readonly run: RunRecord;
  /** True until the first event of this run has been processed (no stored row, nothing applied yet). */
  readonly fresh: boolean;
}

/** One batch, as passed to onEvent (still being processed) and afterCommit (stored). */
export interface Batch {
  /** The batch's events in log order (after onEvent changed them). */
  readonly events: readonly PipelineEvent[];
  /** Drafts of every run the batch touched, keyed by `${user_id}:${external_id}` (core/events logKey). */
  readonly runs: ReadonlyMap<string, RunDraft>;
  /**
   * Once the events are stored (afterEventsStored, afterCommit): each stored event's payload as it was stored,
   * serialised (JSON.stringify), for hooks that send it on (the live broadcast) without serialising it again.
   */
  readonly payloadJson?: ReadonlyMap<PipelineEvent, string>;
  /**
   * Scratch space shared between a plugin's onEvent, afterEventsStored and afterCommit calls for this batch (key by
   * plugin name). Keep per-batch state here, not in the plugin: batches overlap by one step.
   */
  readonly scratch: Map<string, unknown>;
}

export interface Plugin {
  /** Unique in the chain; used in logs and as the scratch key. */
  readonly name: string;
  /**
   * Where a custom plugin runs (built-ins ignore it). "late" (default): after status-machine,
   * preview-truncation and cost-aggregation, so it sees the run's new status and truncated previews.
   * "early": before them, on the event as ingested (e.g. redaction must see a secret before truncation
   * could cut it in half). Either way it runs before alert-evaluation and broadcast.
   */
  readonly order?: "early" | "late";
  /** Called once before the first batch. */
  init?(ctx: PluginContext): void | Promise<void>;
  /**
   * Called for each event, in log order, before storage. May edit `event.payload` and `run.run`.
   * Events of one run always arrive in order and never concurrently.
   */
  onEvent?(event: PipelineEvent, run: RunDraft, batch: Batch): void | Promise<void>;
  /**
   * Called once per batch as soon as its events are stored, while the runs' new versions are being written: for
   * work that does not need that write (the live broadcast, whose frames carry the run snapshot themselves; rows
   * derived from the events, such as llm_calls and scores; the agents' run counters). Each such wait used to follow
   * the runs' write and so lengthened every batch. Storage may not show the runs' new versions yet. Same failure
   * rule as afterCommit. The next batch's onEvent may run once this hook has started (pipeline/overlapped-parts.ts):
   * take what you need from `batch.runs` before the first await.
   */
  afterEventsStored?(batch: Batch): void | Promise<void>;
  /**
   * Called once per batch after its events and runs are stored (alerts, notifications). `batch.runs` holds copies of
   * the runs as this batch left them: the next batch may already be changing the drafts.
   */
  afterCommit?(batch: Batch): void | Promise<void>;
  /** Called once when the pipeline stops. */
  close?(): void | Promise<void>;
}

/** A module path in RUNWATCH_PLUGINS may export a Plugin or a factory of one. */
export type PluginFactory = (ctx: PluginContext) => Plugin | Promise<Plugin>;

/** Type helper for plugin authors: `export default definePlugin({ name: "x", onEvent(e, run) { ... } })`. */
export const definePlugin = <P extends Plugin>(plugin: P): P => plugin;

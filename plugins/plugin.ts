/**
 * The pipeline plugin interface. A plugin is one module whose default export (or `plugin` export) is a Plugin,
 * or a factory `(ctx) => Plugin`. The pipeline takes log batches from the event log and processes each in parts of
 * at most maxBatch events (an OTLP export record expands to hundreds); for every part:
 *
 *   for each event, in log order:   plugin.onEvent(event, run, part)    for every plugin, in chain order
 *   store the part's events:         agent_events (ClickHouse)
 *   then, together:                  the changed agent_runs rows, and
 *                                    plugin.afterEventsStored(part)      for every plugin, concurrently
 *                                    (broadcast, llm_calls and scores rows, agent counters)
 *   once the runs are written:       plugin.afterCommit(part)            for every plugin, concurrently
 * and the log commits the log batch once all its parts are stored.
 *
 * Delivery is at-least-once: after a crash or a failed hook the same part is processed again (storage dedups on
 * event_id). So afterEventsStored and afterCommit side effects must be idempotent or tolerate a repeat (a repeated
 * broadcast is harmless; a counter needs a dedup key, see stores/agent-run-starts.ts). A hook that throws fails the
 * part, which is retried; it is never skipped. Keep onEvent synchronous and cheap: no I/O per event.
 *
 * See plugins/README.md for a walk-through and plugins/examples/ for a complete plugin with its test.
 */
import type { RunRecord } from "../core/events/run.js";
import type { RunKey } from "../core/events/run-key.js";
import type { PipelineEvent } from "../core/events/schema.js";
import type { PipelineContext } from "../core/pipeline-context.js";

export type { PipelineEvent };

/** What a plugin may use: the ports, the config, a logger and the event store. Given to init(). */
export type PluginContext = PipelineContext;

/**
 * The pipeline's working copy of one run during a part. Plugins change `run` in place in onEvent; the pipeline
 * writes a new agent_runs row (with a higher version) for every run the part touched.
 */
export interface RunDraft {
  /** The run as it will be stored. Mutate its fields in onEvent; `version` is assigned by the pipeline. */
  readonly run: RunRecord;
  /** True until the first event of this run has been processed (no stored row, nothing applied yet). */
  readonly fresh: boolean;
  /**
   * Plugins' state for this run, keyed by plugin name. It lives exactly as long as the pipeline's draft of the run:
   * it is dropped with it when a part with the run fails, on a rebalance, or when the run leaves memory, and the
   * next part loads the run from storage with an empty state. So a mark set here once the plugin's work for the run
   * was stored stays true for as long as it is seen.
   */
  readonly pluginState: Map<string, unknown>;
}

/** A run as a part left it, once its events are stored: for reading only. */
export interface RunSnapshot {
  readonly run: Readonly<RunRecord>;
  readonly fresh: boolean;
  readonly pluginState: Map<string, unknown>;
}

/** One part, as passed to onEvent (still being processed). */
export interface Part {
  /** The part's events in log order (as onEvent changed them). */
  readonly events: readonly PipelineEvent[];
  /** Drafts of every run the part touched, by run key (core/events/run-key.ts runKeyOfEvent). */
  readonly runs: ReadonlyMap<RunKey, RunDraft>;
  /**
   * Scratch space shared between a plugin's onEvent, afterEventsStored and afterCommit calls for this part (key by
   * plugin name). Keep per-part state here, not in the plugin: parts overlap by one step.
   */
  readonly scratch: Map<string, unknown>;
}

/** A part whose events are stored, as passed to afterEventsStored and afterCommit. */
export interface StoredPart extends Omit<Part, "runs"> {
  /**
   * The part's runs. In afterEventsStored they are the drafts as the part left them (take what you need before the
   * first await: the next part may then change them); in afterCommit, frozen copies.
   */
  readonly runs: ReadonlyMap<RunKey, RunSnapshot>;
  /** Each stored event's payload as it was stored, serialised, for hooks that send it on without serialising it again. */
  readonly payloadJson: ReadonlyMap<PipelineEvent, string>;
}

/** The name a part had in earlier releases of this interface. */
export type Batch = Part;

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
  /** Called once before the first part. */
  init?(ctx: PluginContext): void | Promise<void>;
  /**
   * Called for each event, in log order, before storage. May edit `event.payload` and `run.run`.
   * Events of one run always arrive in order and never concurrently.
   */
  onEvent?(event: PipelineEvent, run: RunDraft, part: Part): void | Promise<void>;
  /**
   * Called once per part as soon as its events are stored, while the runs' new versions are being written: for work
   * that does not need that write (the live broadcast, whose frames carry the run snapshot themselves; rows derived
   * from the events, such as llm_calls and scores; the agents' run counters). Storage may not show the runs' new
   * versions yet. Same failure rule as afterCommit. The next part's onEvent may run once this hook has started
   * (pipeline/overlapped-parts.ts): take what you need from `part.runs` before the first await.
   */
  afterEventsStored?(part: StoredPart): void | Promise<void>;
  /**
   * Called once per part after its events and runs are stored (alerts, notifications). `part.runs` holds frozen
   * copies of the runs as this part left them: the next part may already be changing the drafts.
   */
  afterCommit?(part: StoredPart): void | Promise<void>;
  /** Called once when the pipeline stops. */
  close?(): void | Promise<void>;
}

/** A module path in RUNWATCH_PLUGINS may export a Plugin or a factory of one. */
export type PluginFactory = (ctx: PluginContext) => Plugin | Promise<Plugin>;

/** Type helper for plugin authors: `export default definePlugin({ name: "x", onEvent(e, run) { ... } })`. */
export const definePlugin = <P extends Plugin>(plugin: P): P => plugin;

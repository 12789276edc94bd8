/**
 * What the pipeline counts about itself (pipeline/counters.ts): the names, their meaning, and the snapshot a pipeline
 * sends with its health reports (core/pipeline-health.ts), which GET /metrics renders (web/metrics.ts). Counts only:
 * never tenant data.
 */

/** Monotonic counts since the pipeline started. */
export const COUNTER_HELP = {
  events_received: "Events taken from the log (an OTLP export record counts as its events).",
  events_stored: "Events stored in agent_events.",
  events_duplicate: "Events not stored again: already stored, or repeated in their part.",
  events_dead_lettered: "Log records and events set aside as dead letters.",
  parts: "Parts processed (at most maxBatch events each).",
  part_failures: "Part attempts that failed (retried, or isolated to the events that fail).",
  run_records_hit: "Runs of a part found in memory.",
  run_records_missed: "Runs of a part not in memory: new, or loaded from storage.",
  runs_new: "Runs not in memory that storage holds nothing of (the stored-runs filter): not loaded, not looked up.",
  runs_loaded: "Runs loaded from storage.",
  events_known: "Events whose duplicate check needed no storage look-up (new runs, or runs whose stored events are known).",
  events_looked_up: "Events whose duplicate check asked storage.",
  run_versions_written: "Run versions written to agent_runs.",
  cost_rows_written: "run_costs rows written (only when a run's cost facts changed).",
  runs_recounted: "Runs whose counters were recounted from storage.",
} as const;
export type CounterName = keyof typeof COUNTER_HELP;

/** Upper bounds (seconds) of the part-latency histogram's buckets. */
export const PART_SECONDS_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

export const GAUGE_HELP = {
  run_records: "Runs held in memory (drafts).",
  known_event_ids: "Stored event ids known in memory.",
  stored_run_ids: "Run ids in the stored-runs filter.",
} as const;
export type GaugeName = keyof typeof GAUGE_HELP;

/** The plugin hooks (plugins/plugin.ts) each plugin's figures are kept for, by their `hook` label. */
export const PLUGIN_HOOKS = ["on_event", "after_events_stored", "after_commit"] as const;
export type PluginHookName = (typeof PLUGIN_HOOKS)[number];

/** What each plugin's hook counts, since the pipeline started; a repeated or isolated part counts again. */
export const PLUGIN_HOOK_HELP = {
  calls: "Calls of a plugin's hook (on_event: one per event; the others: one per part).",
  events: "Events handed to a plugin's hook.",
  runs: "Runs of the parts handed to a plugin's hook.",
  errors: "Calls of a plugin's hook that threw (the part is retried, or its events isolated).",
  seconds: "Seconds spent in a plugin's hook.",
} as const;
export type PluginHookFigure = keyof typeof PLUGIN_HOOK_HELP;
export type PluginHookStats = Readonly<Record<PluginHookFigure, number>>;
/** Each plugin's figures, by plugin name, for the hooks it has. */
export type PluginsSnapshot = Readonly<Record<string, Partial<Readonly<Record<PluginHookName, PluginHookStats>>>>>;

export interface CountersSnapshot {
  readonly counters: Readonly<Record<CounterName, number>>;
  readonly gauges: Readonly<Record<GaugeName, number>>;
  /** Parts per latency bucket (cumulative, as Prometheus counts them), their count and their total seconds. */
  readonly part_seconds: { readonly buckets: readonly number[]; readonly count: number; readonly sum: number };
  /** Each plugin's own figures (absent from pipelines that predate them). */
  readonly plugins?: PluginsSnapshot;
}

/** Whether a value received over pub/sub is a snapshot (a foreign or older pipeline may send none). */
export const isCountersSnapshot = (v: unknown): v is CountersSnapshot => {
  const s = v as CountersSnapshot | null;
  return typeof s === "object" && s !== null && typeof s.counters === "object" && s.counters !== null && typeof s.gauges === "object" && s.gauges !== null &&
    typeof s.part_seconds === "object" && s.part_seconds !== null && Array.isArray(s.part_seconds.buckets) &&
    (s.plugins === undefined || (typeof s.plugins === "object" && s.plugins !== null));
};

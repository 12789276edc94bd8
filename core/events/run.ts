import type { RunStatus } from "./schema.js";

/**
 * One row of agent_runs (ClickHouse ReplacingMergeTree(version) keyed by user_id, external_id; read by project_id,
 * external_id — a run's user_id is the sender of its first event and never changes, so its versions fold).
 * The pipeline writes a full new row whenever a run changes (a change of its counters alone at most once per log
 * batch: pipeline/run-writer.ts); ClickHouse keeps the highest version.
 */
export interface RunRecord {
  /** The run's project (the tenant). */
  project_id: number;
  /** The user whose key sent the run's first event. */
  user_id: number;
  /** The client's sdk_run_id. */
  external_id: string;
  run_id: string;
  agent_name: string;
  status: RunStatus;
  /** occurred_at of the event that set `status` (see the ordering rule in status-machine.ts). */
  status_at: string;
  started_at: string | null;
  ended_at: string | null;
  last_event_at: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_usd: number;
  /** Where cost_usd came from: sent by the client, computed from the price table, or unknown. */
  cost_source: "client" | "computed" | "none";
  framework: string;
  config_version: number | null;
  event_count: number;
  error_count: number;
  /** Last error message (error events), for the dashboard's errors view. */
  last_error: string;
  /** Open human_input_requested question while status is waiting_for_input, else "". */
  pending_question: string;
  /** The session the run belongs to (set by its first event that names one), "" for none. */
  session_id: string;
  /** The experiment this run executes an item of (docs/EVALUATION.md), set by its run_start; "" for none. */
  experiment_id: string;
  /** The dataset item it executes, and which repetition of it (1, 2, …; 0 outside an experiment). */
  dataset_item_id: string;
  repetition: number;
  /** LLM-call spans of the run (steps of kind "llm" that ended): with any, tokens and cost are their sum. */
  llm_calls: number;
  /**
   * The models its LLM calls named (plugins/llm-calls.ts): the union over every call, sorted, at most MAX_RUN_MODELS;
   * replaced, never changed in place, like tags. What `model:` filters on (docs/EXPLORER.md).
   */
  models: readonly string[];
  /**
   * What the client says about the run (docs/API.md, "Tags, metadata, end user, environment, release"), folded from
   * every event by core/events/run-attributes.ts. Tags: the union, sorted, at most MAX_RUN_TAGS. Metadata: the latest
   * value of each key as JSON text ("acme", 42, true), at most MAX_RUN_METADATA_KEYS keys. Both are replaced, never
   * changed in place: a run's frozen copies share them.
   */
  tags: readonly string[];
  metadata: Readonly<Record<string, string>>;
  /** The latest non-empty value each event named; "" for none. */
  end_user: string;
  environment: string;
  release: string;
  /** The start of the run's input (its run_start's) and output (its run_end's) as text, for the runs table. */
  input_preview: string;
  output_preview: string;
  /** Monotonic per run: the pipeline's ms clock * 1000 + sequence. */
  version: number;
}

const NO_TAGS: readonly string[] = Object.freeze([]);

/** Distinct models a run version keeps; a run calling more (a model per call, generated names) keeps its first ones. */
export const MAX_RUN_MODELS = 32;

/** `models` with `model` added, sorted; `models` itself when it is there already (the common case: nothing allocated). */
export function withModel(models: readonly string[], model: string): readonly string[] {
  if (model === "" || models.length >= MAX_RUN_MODELS || models.includes(model)) return models;
  return [...models, model].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
const NO_METADATA: Readonly<Record<string, string>> = Object.freeze({});

/** A new run of the project `owner.project_id`, first sent by `owner.user_id`. */
export function newRunRecord(owner: { readonly project_id: number; readonly user_id: number }, externalId: string, runId: string, at: string): RunRecord {
  return {
    project_id: owner.project_id,
    user_id: owner.user_id,
    external_id: externalId,
    run_id: runId,
    agent_name: "",
    status: "running",
    status_at: at,
    started_at: null,
    ended_at: null,
    last_event_at: at,
    model: "",
    prompt_tokens: 0,
    completion_tokens: 0,
    total_tokens: 0,
    cost_usd: 0,
    cost_source: "none",
    framework: "",
    config_version: null,
    session_id: "",
    experiment_id: "",
    dataset_item_id: "",
    repetition: 0,
    event_count: 0,
    error_count: 0,
    last_error: "",
    pending_question: "",
    llm_calls: 0,
    models: NO_TAGS,
    tags: NO_TAGS,
    metadata: NO_METADATA,
    end_user: "",
    environment: "",
    release: "",
    input_preview: "",
    output_preview: "",
    version: 0,
  };
}

/**
 * Run summaries (last_error, pending_question) are copied into every run row version, list and live frame: a
 * client-sized error text there would make every one of them client-sized. The event keeps the whole text.
 */
export const MAX_SUMMARY_CHARS = 1_000;

export const summaryText = (s: string): string => (s.length > MAX_SUMMARY_CHARS ? `${s.slice(0, MAX_SUMMARY_CHARS - 1)}…` : s);

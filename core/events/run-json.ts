/**
 * The one public JSON shape of a run: what the read API answers (GET /api/runs, GET /api/runs/{sdk_run_id},
 * GET /api/sessions/{id}) and what the live `events` message carries (plugins/broadcast.ts, docs/REALTIME.md), so a
 * client reads a run the same way from either. Its id is `sdk_run_id`, the name the client sent it under (the run
 * record's `external_id`). The OpenAPI `Run` schema (web/api/openapi/schemas.ts) is checked against this type.
 *
 * The broadcast makes one per run of every pipeline part: one object literal, no pass over the run but this one.
 */
import { msOfIso } from "./iso-time.js";
import type { RunRecord } from "./run.js";
import type { MetadataValue } from "./attributes.js";
import { decodeMetadata } from "./run-attributes.js";
import type { RunStatus } from "./schema.js";

export interface RunJson {
  readonly sdk_run_id: string;
  readonly run_id: string;
  readonly agent_name: string;
  readonly status: RunStatus;
  readonly started_at: string | null;
  readonly ended_at: string | null;
  /** ended_at − started_at, null until both are known. */
  readonly duration_ms: number | null;
  readonly last_event_at: string;
  readonly framework: string;
  readonly model: string;
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
  readonly cost_usd: number;
  readonly cost_source: RunRecord["cost_source"];
  readonly config_version: number | null;
  readonly session_id: string | null;
  readonly experiment_id: string | null;
  readonly dataset_item_id: string | null;
  /** Which repetition of its dataset item (1, 2, …); null outside an experiment. */
  readonly repetition: number | null;
  readonly event_count: number;
  readonly error_count: number;
  readonly last_error: string;
  readonly pending_question: string;
  readonly llm_calls: number;
  /**
   * The models its LLM calls named, sorted; at most MAX_RUN_MODELS (core/events/run.ts), and [] for a run without
   * LLM calls. null when the run made LLM calls but its record names none of their models: a run recorded before runs
   * kept their models (ClickHouse migration 251; its calls, models and all, are on GET /api/runs/{id}/spans), or one
   * whose calls named no model. docs/API.md, "Runs".
   */
  readonly models: readonly string[] | null;
  /** The run's tags, sorted (docs/API.md, "Tags, metadata, end user, environment, release"). */
  readonly tags: readonly string[];
  /** The latest value of each metadata key, of the JSON type it was sent as. */
  readonly metadata: Readonly<Record<string, MetadataValue>>;
  readonly end_user: string | null;
  readonly environment: string | null;
  readonly release: string | null;
  /** The start of the run's input and output as text ("" for none). */
  readonly input_preview: string;
  readonly output_preview: string;
}

const NO_METADATA: Readonly<Record<string, MetadataValue>> = Object.freeze({});

/** The metadata decoded; most runs have none, and those share one empty object. */
function metadataOf(m: Readonly<Record<string, string>>): Readonly<Record<string, MetadataValue>> {
  for (const _ in m) return decodeMetadata(m);
  return NO_METADATA;
}

/** ms between two stored timestamps, null when either is missing or unreadable. */
function durationMs(started: string | null, ended: string | null): number | null {
  if (started === null || ended === null) return null;
  const ms = msOfIso(ended) - msOfIso(started);
  return Number.isFinite(ms) ? Math.max(0, ms) : null;
}

export function runJson(r: RunRecord): RunJson {
  return {
    sdk_run_id: r.external_id,
    run_id: r.run_id,
    agent_name: r.agent_name,
    status: r.status,
    started_at: r.started_at,
    ended_at: r.ended_at,
    duration_ms: durationMs(r.started_at, r.ended_at),
    last_event_at: r.last_event_at,
    framework: r.framework,
    model: r.model,
    prompt_tokens: r.prompt_tokens,
    completion_tokens: r.completion_tokens,
    total_tokens: r.total_tokens,
    cost_usd: r.cost_usd,
    cost_source: r.cost_source,
    config_version: r.config_version,
    session_id: r.session_id || null,
    experiment_id: r.experiment_id || null,
    dataset_item_id: r.dataset_item_id || null,
    repetition: r.experiment_id ? r.repetition : null,
    event_count: r.event_count,
    error_count: r.error_count,
    last_error: r.last_error,
    pending_question: r.pending_question,
    llm_calls: r.llm_calls,
    models: r.models.length > 0 || r.llm_calls === 0 ? r.models : null,
    tags: r.tags,
    metadata: metadataOf(r.metadata),
    end_user: r.end_user || null,
    environment: r.environment || null,
    release: r.release || null,
    input_preview: r.input_preview,
    output_preview: r.output_preview,
  };
}

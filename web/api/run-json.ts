/** The public JSON shape of runs and events in the read API (GET /api/runs, GET /api/runs/{sdk_run_id}). */
import type { RunRecord } from "../../core/events/run.js";
import type { StoredEvent } from "../../core/ports/event-store.js";

export function runJson(r: RunRecord) {
  const started = r.started_at ? Date.parse(r.started_at) : NaN;
  const ended = r.ended_at ? Date.parse(r.ended_at) : NaN;
  return {
    sdk_run_id: r.external_id,
    run_id: r.run_id,
    agent_name: r.agent_name,
    status: r.status,
    started_at: r.started_at,
    ended_at: r.ended_at,
    duration_ms: Number.isFinite(started) && Number.isFinite(ended) ? Math.max(0, ended - started) : null,
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
  };
}

export function eventJson(e: StoredEvent) {
  return {
    event_id: e.event_id,
    event_type: e.event_type,
    occurred_at: e.occurred_at,
    received_at: e.received_at,
    agent_name: e.agent_name,
    config_version: e.config_version,
    span_id: e.span_id || null,
    parent_span_id: e.parent_span_id || null,
    payload: e.payload,
  };
}

/**
 * The public JSON shape of a stored event in the read API (GET /api/runs/{sdk_run_id}). A run's shape is
 * core/events/run-json.ts, shared with the live `events` message.
 */
import type { StoredEvent } from "../../core/ports/event-store.js";

export function eventJson(e: StoredEvent) {
  const { event_id, event_type, occurred_at, received_at, agent_name, config_version, payload } = e;
  // Field order is the document's: ids of the span last, before the payload.
  return { event_id, event_type, occurred_at, received_at, agent_name, config_version, span_id: e.span_id || null, parent_span_id: e.parent_span_id || null, payload };
}

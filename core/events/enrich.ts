import type { IngestEvent, LoggedEvent } from "./schema.js";
import type { Sender } from "./sender.js";
import { runIdFor, uuidv7 } from "../ids.js";
import { canonicalIso } from "./iso-time.js";
import { copyRunAttributes } from "./attributes.js";

/** The events of one batch share their receive time: format it once. */
let lastReceived = { ms: NaN, iso: "" };
function isoOf(d: Date): string {
  const ms = d.getTime();
  if (ms !== lastReceived.ms) lastReceived = { ms, iso: d.toISOString() };
  return lastReceived.iso;
}

/**
 * Fixes project, sender, ids and timestamps of a validated event (see LoggedEvent). occurred_at is normalised to
 * UTC ISO with milliseconds and defaults to the receive time; the client's event_id (idempotency) is kept.
 * `runIds` memoises run ids within one batch (most events of a batch share a few runs; the id is a SHA-1).
 */
export function enrichEvent(e: IngestEvent, sender: Sender, receivedAt: Date, runIds?: Map<string, string>): LoggedEvent {
  const received = isoOf(receivedAt);
  let runId = runIds?.get(e.sdk_run_id);
  if (runId === undefined) {
    runId = runIdFor(sender.projectId, e.sdk_run_id);
    runIds?.set(e.sdk_run_id, runId);
  }
  const out: { -readonly [K in keyof LoggedEvent]: LoggedEvent[K] } = {
    event_id: e.event_id ? e.event_id.toLowerCase() : uuidv7(receivedAt.getTime()),
    project_id: sender.projectId,
    user_id: sender.userId,
    run_id: runId,
    sdk_run_id: e.sdk_run_id,
    event_type: e.event_type,
    agent_name: e.agent_name ?? null,
    payload: e.payload,
    occurred_at: e.occurred_at ? canonicalIso(e.occurred_at) : received,
    received_at: received,
    config_version: e.config_version ?? null,
  };
  // Assigned, not spread from a conditional literal: that made a throw-away object per field and event.
  if (e.span_id !== undefined) out.span_id = e.span_id;
  if (e.parent_span_id !== undefined) out.parent_span_id = e.parent_span_id;
  if (e.session_id !== undefined) out.session_id = e.session_id;
  copyRunAttributes(e, out);
  return out;
}

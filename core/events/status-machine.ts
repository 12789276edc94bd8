/**
 * The run status machine of docs/API.md ("Run statuses"), as pure functions.
 *
 * Ordering rule (documented in docs/ARCHITECTURE.md): events of one run are processed in log order, but a
 * status-moving event only moves the status if its occurred_at is not earlier than the occurred_at of the
 * event that set the current status. A late-arriving `step` never matters (it does not move status), and a
 * delayed `human_input_received` that happened before the `run_end` cannot drag a finished run back to
 * `running`. Ties go to arrival order. Every event is stored either way.
 */
import { msOfIso } from "./iso-time.js";
import type { EventType, RunStatus } from "./schema.js";

const TARGET: Partial<Record<EventType, RunStatus>> = {
  run_start: "running",
  run_end: "success",
  error: "error",
  human_input_requested: "waiting_for_input",
  human_input_received: "running",
};

/** The status an event type moves a run to, or undefined for types that leave it unchanged (step, tool_call). */
export const targetStatus = (type: EventType): RunStatus | undefined => TARGET[type];

export interface StatusState {
  readonly status: RunStatus;
  /** occurred_at (ISO) of the event that set `status`. */
  readonly status_at: string;
}

/**
 * Applies one event to the current status. `current` is undefined for a run not seen before.
 * An event that is not status-moving on an unknown run starts it as `running` (the client evidently
 * began a run whose run_start has not arrived yet).
 */
export function transition(
  current: StatusState | undefined,
  event: { readonly event_type: EventType; readonly occurred_at: string },
): StatusState & { readonly changed: boolean } {
  const target = targetStatus(event.event_type);
  if (current === undefined) {
    return { status: target ?? "running", status_at: event.occurred_at, changed: true };
  }
  // The current state's two fields only: `current` is often a whole run record, and copying it for every event that
  // leaves the status alone (most of them) was a large share of the pipeline's allocations.
  if (target === undefined) return unchanged(current);
  if (msOfIso(event.occurred_at) < msOfIso(current.status_at)) return unchanged(current);
  return { status: target, status_at: event.occurred_at, changed: target !== current.status || event.occurred_at !== current.status_at };
}

const unchanged = (current: StatusState): StatusState & { readonly changed: false } => ({ status: current.status, status_at: current.status_at, changed: false });

export const isTerminal = (s: RunStatus): boolean => s === "success" || s === "error";

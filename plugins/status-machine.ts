/**
 * status-machine: applies the run status rule (docs/API.md; core/events/status-machine.ts) and keeps the run's bookkeeping fields:
 * started_at, ended_at, last_event_at, event_count, error_count, last_error, pending_question, framework,
 * agent_name, config_version, session_id (set once, by the first event that names one); the run's tags, metadata,
 * end_user, environment and release (core/events/run-attributes.ts: duplicates too, since a run loaded after a failed
 * attempt lacks what its stored events said); input_preview (its first run_start with an input) and output_preview
 * (its latest run_end with an output).
 *
 * Ordering rule: events arrive in log order; a status-moving event only moves the status if its occurred_at
 * is not earlier than that of the event that set the current status (ties go to log order). Fields tied to
 * the status (ended_at, pending_question) move with it; counters and last_event_at take every event.
 */
import { summaryText } from "../core/events/run.js";
import { foldRunAttributes } from "../core/events/run-attributes.js";
import { previewText } from "../core/events/run-text.js";
import { msOfIso } from "../core/events/iso-time.js";
import { isTerminal, transition } from "../core/events/status-machine.js";
import type { Plugin } from "./plugin.js";

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const later = (a: string | null, b: string): boolean => a === null || msOfIso(b) > msOfIso(a);
const earlier = (a: string | null, b: string): boolean => a === null || msOfIso(b) < msOfIso(a);

export const statusMachine = (): Plugin => ({
  name: "status-machine",
  onEvent(event, draft) {
    const run = draft.run;
    // A resent run_start (a client retry, or the run_start each OTLP export of a trace carries) never reopens a
    // run: its status was applied when the run_start was first processed.
    const resentStart = event.duplicate && event.event_type === "run_start" && !draft.fresh;
    if (!resentStart) {
      const next = transition(draft.fresh ? undefined : run, event);
      if (next.changed) {
        run.status = next.status;
        run.status_at = next.status_at;
        run.ended_at = isTerminal(next.status) ? event.occurred_at : null;
        run.pending_question =
          next.status === "waiting_for_input" ? summaryText(str(event.payload.question) ?? run.pending_question) : "";
      }
    }
    if (draft.fresh || later(run.last_event_at, event.occurred_at)) run.last_event_at = event.occurred_at;
    if (!event.duplicate) {
      run.event_count += 1;
      if (event.event_type === "error") run.error_count += 1;
    }
    if (event.event_type === "error") {
      run.last_error = summaryText(str(event.payload.error_message) ?? str(event.payload.error_type) ?? "error");
    }
    if (event.event_type === "run_start") {
      // The earliest run_start wins: a retried run_start must not move the start forward. The copies of one
      // run_start differ in time (each OTLP export of a trace dates its run_start by its own earliest span), so
      // when the status is still the one the start set, it moves back with the start: otherwise a child span's
      // export processed first would date "running" after the root's end, and the run_end would lose to it.
      if (earlier(run.started_at, event.occurred_at)) {
        if (run.status === "running" && run.status_at === run.started_at) run.status_at = event.occurred_at;
        run.started_at = event.occurred_at;
      }
      run.framework = str(event.payload.framework) ?? run.framework;
      if (run.input_preview === "" && event.payload.input != null) run.input_preview = previewText(event.payload.input, "input");
      if (run.experiment_id === "" && typeof event.payload.experiment_id === "string") {
        run.experiment_id = event.payload.experiment_id.toLowerCase();
        run.dataset_item_id = str(event.payload.dataset_item_id) ?? "";
        run.repetition = typeof event.payload.repetition === "number" ? event.payload.repetition : 1;
      }
    }
    // A resent start does not rename the run, but names one that has no agent yet: a run_start replayed after a crash
    // is a duplicate (its event was stored) although the stored run may never have taken it (the run's later events,
    // from the other log lane, were stored first).
    if (event.agent_name && (!resentStart || run.agent_name === "")) run.agent_name = event.agent_name;
    if (event.config_version !== null) run.config_version = event.config_version;
    if (run.session_id === "" && event.session_id) run.session_id = event.session_id;
    if (event.event_type === "run_end" && event.payload.output != null) run.output_preview = previewText(event.payload.output, "output");
    foldRunAttributes(run, event);
  },
});

export default statusMachine;

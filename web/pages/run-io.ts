/**
 * What a run was asked and what it answered, as a dataset item takes them: the `input` of its run_start and the
 * `output` of its run_end (undefined when the run sent none, or its run_end is not among `events`).
 */
import type { StoredEvent } from "../../core/clickhouse/types.js";

export function runInputOutput(events: readonly Pick<StoredEvent, "event_type" | "payload">[]): { input: unknown; output: unknown } {
  const start = events.find((e) => e.event_type === "run_start");
  const end = events.findLast((e) => e.event_type === "run_end");
  return { input: start?.payload.input, output: end?.payload.output };
}

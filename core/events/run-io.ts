/**
 * What a run was asked and what it answered, as a dataset item takes them: the `input` of its run_start and the
 * `output` of its run_end (undefined when the run sent none, or its run_end is not among `events`).
 */
import type { StoredEvent } from "../ports/event-store.js";

export function runInputOutput(events: readonly Pick<StoredEvent, "event_type" | "payload">[]): { input: unknown; output: unknown } {
  const start = events.find((e) => e.event_type === "run_start");
  const end = events.findLast((e) => e.event_type === "run_end");
  return { input: start?.payload.input, output: end?.payload.output };
}

/**
 * What a span was given and what it gave, as a dataset item takes them: its start event's `input` (a tool call's
 * `input_preview`) and its end event's `output` (`output_preview`); undefined when absent.
 */
export function spanInputOutput(events: readonly Pick<StoredEvent, "event_type" | "payload">[]): { input: unknown; output: unknown; name: string } {
  const start = events.find((e) => e.payload.phase === "start") ?? events[0];
  const end = events.findLast((e) => e.payload.phase === "end");
  const pick = (p: Record<string, unknown> | undefined, key: "input" | "output") => p?.[key] ?? p?.[`${key}_preview`];
  const name = String(start?.payload.node_name ?? start?.payload.tool_name ?? "");
  return { input: pick(start?.payload, "input") ?? pick(end?.payload, "input"), output: pick(end?.payload, "output"), name };
}

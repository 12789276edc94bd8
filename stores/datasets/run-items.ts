/**
 * A run, or one of its spans, as a dataset item: its input, an expected output (the run's own output, or one given),
 * the agent and config version as metadata, and where it came from. The dashboard's "Add to dataset" (one run, or the
 * runs list's selection) and the MCP server's add_to_dataset make their items here, so an item made either way is the
 * same item.
 */
import { NotFound } from "../../core/errors.js";
import { runInputOutput, spanInputOutput } from "../../core/events/run-io.js";
import type { RunRecord } from "../../core/events/run.js";
import type { EventStore } from "../../core/ports/event-store.js";
import { parseItem, type NewItem } from "./items.js";

/** The events read for a run's input and output (its start and end are among its first and last). */
const RUN_EVENTS_READ = 1_000;

export interface RunItemOptions {
  /** One of the run's spans instead of the whole run. */
  readonly spanId?: string;
  /** The item's expected output: the run's (or span's) own output, a given value, or none. */
  readonly expected: "output" | { readonly value: unknown } | "none";
  /** The item's place in an error message (`item`, `runs[3]`). */
  readonly place: string;
}

/** The item; NotFound when the run has no such span, ValidationError (naming `place`) when it cannot be an item. */
export async function runAsItem(events: EventStore, run: RunRecord, opts: RunItemOptions): Promise<NewItem> {
  let io: { input?: unknown; output?: unknown };
  if (opts.spanId !== undefined) {
    const spanEvents = await events.eventsOfSpan(run.project_id, run.run_id, opts.spanId);
    if (spanEvents.length === 0) throw new NotFound({ resource: "span", message: `run ${JSON.stringify(run.external_id)} has no span ${JSON.stringify(opts.spanId)}` });
    io = spanInputOutput(spanEvents);
  } else {
    io = runInputOutput(await events.listEvents(run.project_id, run.run_id, { limit: RUN_EVENTS_READ }));
  }
  const expected = opts.expected === "output" ? io.output : opts.expected === "none" ? undefined : opts.expected.value;
  return parseItem({
    input: io.input ?? null,
    ...(expected !== undefined ? { expected_output: expected } : {}),
    metadata: { agent_name: run.agent_name, ...(run.config_version ? { config_version: run.config_version } : {}) },
    source_sdk_run_id: run.external_id,
    ...(opts.spanId !== undefined ? { source_span_id: opts.spanId } : {}),
  }, opts.place, opts.spanId !== undefined ? "span" : "run");
}

/**
 * The text each new event of a part gives free-text search (agent_events.search_text, migration 195; docs/STORAGE.md):
 * a run_start's input, a run_end's output, an error's message, a span's name (core/events/run-text.ts
 * eventSearchText). It goes into the event's own row, so search costs ingest no insert of its own — a separate
 * table's insert per part, on the one writing session, was a tenth of the burst's time (docs/BENCHMARKS.md).
 *
 * A span name is kept the first time a run has it, not on each of its thousands of spans: search reads less. The
 * names a run has had are in its pipeline state (`pluginState`), dropped with it when a part fails, so a retry gives
 * them again. Made after every plugin's onEvent, so a custom plugin's redaction applies.
 */
import { runKeyOfEvent, type RunKey } from "../core/events/run-key.js";
import { eventSearchText } from "../core/events/run-text.js";
import type { PipelineEvent } from "../core/events/schema.js";

const STATE = "search-text";
/** Span names remembered per run; past it a new name is kept each time it is seen (a repeat costs a few bytes, not a miss). */
const MAX_NAMES_PER_RUN = 1_000;

interface RunState {
  readonly pluginState: Map<string, unknown>;
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** A span's name as sent: a step's node_name, a tool call's tool_name. */
const spanName = (e: PipelineEvent): string => str(e.event_type === "step" ? e.payload.node_name : e.payload.tool_name);

/** Whether the span name is new for the run, and remembers it. */
function newName(run: RunState | undefined, name: string): boolean {
  if (!run) return true;
  let names = run.pluginState.get(STATE) as Set<string> | undefined;
  if (!names) run.pluginState.set(STATE, (names = new Set()));
  if (names.has(name)) return false;
  if (names.size < MAX_NAMES_PER_RUN) names.add(name);
  return true;
}

/** The search text of each of `events` that has one (the events to be stored, in log order). */
export function searchTexts(events: Iterable<PipelineEvent>, runs: ReadonlyMap<RunKey, RunState>): Map<PipelineEvent, string> {
  const texts = new Map<PipelineEvent, string>();
  let key: RunKey | undefined;
  let last: PipelineEvent | undefined;
  for (const e of events) {
    if (e.event_type === "step" || e.event_type === "tool_call") {
      // Most events are spans whose name the run had already: the name as sent is looked up before any text is made,
      // and a run's key is made once for the events of it that follow each other.
      const name = spanName(e);
      if (name === "") continue;
      if (!last || last.sdk_run_id !== e.sdk_run_id || last.project_id !== e.project_id) key = runKeyOfEvent(e);
      last = e;
      if (!newName(runs.get(key!), name)) continue;
    }
    const text = eventSearchText(e);
    if (text !== "") texts.set(e, text);
  }
  return texts;
}

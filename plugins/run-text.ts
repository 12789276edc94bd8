/**
 * run-text: after a part's events are stored, one `run_text` row (stores/runs/run-text.ts) per text a run can be found
 * by in free-text search: a run_start's input and a run_end's output (core/events/run-text.ts searchText), an error's
 * type and message, and a span's name (a step's node_name, a tool call's tool_name) once per run and name. The
 * payloads are read as stored, after every onEvent (a custom plugin's redaction included).
 *
 * Replays included, as llm-calls does: the rows may be missing if the last attempt died after storing the events,
 * and a row written again folds away (keyed by its event). The span names a run has had written are kept in the
 * run's plugin state, dropped with it when a part fails, so a retry writes them again.
 */
import { runKeyOfEvent, type RunKey } from "../core/events/run-key.js";
import { cutText, RUN_TEXT_CHARS, searchText } from "../core/events/run-text.js";
import type { PipelineEvent } from "../core/events/schema.js";
import { insertRunText, type RunTextRow } from "../stores/runs/run-text.js";
import type { Plugin, PluginContext, RunSnapshot, StoredPart } from "./plugin.js";

const NAME = "run-text";
/** Span names remembered per run; past it a new name is written each time it is seen (a repeat costs a row, not a miss). */
const MAX_NAMES_PER_RUN = 1_000;

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** The text of an event worth searching, lower-cased and cut; "" for none. */
export function eventSearchText(e: Pick<PipelineEvent, "event_type" | "payload">): string {
  const p = e.payload;
  switch (e.event_type) {
    case "run_start":
      return searchText(p.input, "input");
    case "run_end":
      return searchText(p.output, "output");
    case "error":
      return cutText([str(p.error_type), str(p.error_message)].filter(Boolean).join(": "), RUN_TEXT_CHARS).toLowerCase();
    case "step":
      return cutText(str(p.node_name), RUN_TEXT_CHARS).toLowerCase();
    case "tool_call":
      return cutText(str(p.tool_name), RUN_TEXT_CHARS).toLowerCase();
    default:
      return "";
  }
}

/** Whether the span name is new for the run (and remembers it). */
function newName(run: RunSnapshot | undefined, name: string): boolean {
  if (!run) return true;
  let names = run.pluginState.get(NAME) as Set<string> | undefined;
  if (!names) run.pluginState.set(NAME, (names = new Set()));
  if (names.has(name)) return false;
  if (names.size < MAX_NAMES_PER_RUN) names.add(name);
  return true;
}

/** The part's rows, made before the first wait (the next part may then change the runs' state). */
export function runTextRows(part: Pick<StoredPart, "events" | "runs">): RunTextRow[] {
  const rows: RunTextRow[] = [];
  let key: RunKey | undefined;
  let last: PipelineEvent | undefined;
  for (const e of part.events) {
    const text = eventSearchText(e);
    if (text === "") continue;
    if (e.event_type === "step" || e.event_type === "tool_call") {
      // A run's events mostly follow each other: its key is made once for them.
      if (!last || last.sdk_run_id !== e.sdk_run_id || last.project_id !== e.project_id) key = runKeyOfEvent(e);
      last = e;
      if (!newName(part.runs.get(key!), text)) continue;
    }
    rows.push({ project_id: e.project_id, run_id: e.run_id, sdk_run_id: e.sdk_run_id, event_id: e.event_id, at: e.occurred_at, text });
  }
  return rows;
}

export const runText = (): Plugin => {
  let ctx: PluginContext | undefined;
  return {
    name: NAME,
    init(c) {
      ctx = c;
    },
    async afterEventsStored(part) {
      const rows = runTextRows(part);
      if (rows.length > 0 && ctx) await insertRunText(ctx.clickhouse, rows);
    },
  };
};

export default runText;

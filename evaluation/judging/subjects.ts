/**
 * What an evaluator judges (evaluation/model/subject.ts), read from the judged run's own events in its own project:
 * its run_start (input, metadata) and run_end (output), its spans by name when the template reads them, and, for an
 * experiment's run, its dataset item's expected output at the experiment's pinned version. A span target judges the
 * span's input and output, with the run's metadata.
 */
import type { EventStore, StoredEvent } from "../../core/ports/event-store.js";
import type { RunRecord } from "../../core/events/run.js";
import { runInputOutput, spanInputOutput } from "../../core/events/run-io.js";
import type { EvaluationSubject } from "../model/subject.js";
import type { Sql } from "../../core/ports/sql.js";
import { experimentExpectedOutput } from "../../stores/datasets/experiment-results.js";
import { templateVariables } from "../model/template.js";
import type { EvaluatorDefinition } from "../model/definition.js";

/** The span events a template's {{span:…}} may read; a run with more is judged on its first ones. */
const MAX_SPAN_EVENTS = 5_000;

function metadataOf(start: StoredEvent | undefined): Record<string, unknown> {
  if (!start) return {};
  const { input: _input, metadata, ...rest } = start.payload;
  return typeof metadata === "object" && metadata !== null && !Array.isArray(metadata) ? { ...rest, ...(metadata as Record<string, unknown>) } : rest;
}

function spansByName(events: readonly StoredEvent[]): Map<string, { input: unknown; output: unknown }> {
  const byId = new Map<string, StoredEvent[]>();
  for (const e of events) {
    const key = e.span_id || `${e.event_type}:${String(e.payload.node_name ?? e.payload.tool_name ?? "")}`;
    byId.set(key, [...(byId.get(key) ?? []), e]);
  }
  const out = new Map<string, { input: unknown; output: unknown }>();
  for (const list of byId.values()) {
    const { input, output, name } = spanInputOutput(list);
    if (name) out.set(name, { input, output });
  }
  return out;
}

export interface SubjectOptions {
  /** Judge this span of the run instead of the run. */
  readonly spanId?: string;
  /** The evaluator that will judge it: its run's spans are read by name when its template uses {{span:…}}. */
  readonly evaluator?: EvaluatorDefinition;
  /** The expected output to use instead of the experiment item's (the playground on a dataset item). */
  readonly expectedOutput?: unknown;
}

export async function runSubject(deps: { events: EventStore; sql: Sql }, run: RunRecord, opts: SubjectOptions = {}): Promise<EvaluationSubject> {
  const ends = await deps.events.eventsOfTypes(run.project_id, run.run_id, ["run_start", "run_end"], 20);
  const io = runInputOutput(ends);
  const start = ends.find((e) => e.event_type === "run_start");
  let { input, output } = io;
  let error = run.last_error;
  if (opts.spanId) {
    const span = spanInputOutput(await deps.events.eventsOfSpan(run.project_id, run.run_id, opts.spanId));
    input = span.input;
    output = span.output;
    error = "";
  }
  const withSpans = opts.evaluator?.type === "llm_judge" && templateVariables(opts.evaluator.prompt).some((v) => v.startsWith("span:"));
  const spans = withSpans ? spansByName(await deps.events.eventsOfTypes(run.project_id, run.run_id, ["step", "tool_call"], MAX_SPAN_EVENTS)) : new Map();
  const expected = opts.expectedOutput !== undefined ? opts.expectedOutput : await experimentExpectedOutput(deps.sql, run);
  const duration = run.started_at && run.ended_at ? Date.parse(run.ended_at) - Date.parse(run.started_at) : null;
  return {
    input,
    output,
    ...(expected !== undefined ? { expected_output: expected } : {}),
    error,
    metadata: metadataOf(start),
    spans,
    status: run.status,
    duration_ms: duration,
    cost_usd: run.cost_usd,
  };
}

/**
 * How a run failed, as a reviewer reads it without opening the trace (the review page of an annotation queue): the
 * run's last `error` event (type, message, traceback) and the span that failed — the one the error event names, else
 * the innermost span that ended with an error (the last in start order: a failing node's failing tool starts after
 * it). The SDKs send a run's error without a span and put the failing step's error on the step's end event.
 */
import type { EventStore, StoredEvent } from "../ports/event-store.js";
import { buildSpans, type Span } from "./spans.js";

export interface RunError {
  readonly type: string;
  readonly message: string;
  readonly traceback: string;
  readonly span: { readonly id: string; readonly name: string; readonly kind: string; readonly error: string | null } | null;
}

/** Error events read at most: a run that logged more shows the last of its first hundred. */
export const MAX_ERROR_EVENTS = 100;

const text = (v: unknown): string => (typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v));

/** The error of a run from its error events (processing order) and spans; undefined when it has neither. */
export function runErrorOf(errors: readonly Pick<StoredEvent, "payload" | "span_id">[], spans: readonly Span[]): RunError | undefined {
  const last = errors[errors.length - 1];
  const named = last?.span_id ? spans.find((s) => s.span_id === last.span_id) : undefined;
  const failed = named ?? spans.findLast((s) => s.status === "error");
  if (!last && !failed) return undefined;
  const p = last?.payload ?? {};
  return {
    type: text(p.error_type),
    message: text(p.error_message) || (last ? "" : (failed?.error ?? "")),
    traceback: text(p.traceback),
    span: failed ? { id: failed.span_id, name: failed.name, kind: failed.kind, error: failed.error } : null,
  };
}

/** Reads a run's error: its error events, and its spans (the span an error event names alone, when it names one). */
export async function readRunError(events: EventStore, projectId: number, runId: string): Promise<RunError | undefined> {
  const errors = await events.eventsOfTypes(projectId, runId, ["error"], MAX_ERROR_EVENTS);
  const spanId = errors[errors.length - 1]?.span_id;
  const spans = buildSpans(spanId ? await events.eventsOfSpan(projectId, runId, spanId) : await events.listSpanEvents(projectId, runId));
  return runErrorOf(errors, spans);
}

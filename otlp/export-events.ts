/**
 * An export's spans → the events the pipeline stores: the mapping (mapping.ts), then for each event the ingest
 * value rules (core/events/schema.ts checkBuiltEvent, which also repairs U+0000 and lone surrogates in content) and
 * enrichment (owner, run id, receive time). The same function runs wherever an export is mapped: in the pipeline
 * for an export record (export-record.ts), and at the receiver for an export too large to log whole.
 *
 * A span whose events fail the checks is set aside with the reason; the mapping is total, so only malformed spans
 * (mapping.ts refusalOf) are expected here, and mapping.test.ts checks that no other span is.
 */
import { Either } from "effect";
import { enrichEvent } from "../core/events/enrich.js";
import { checkBuiltEvent, type IngestEvent, type LoggedEvent } from "../core/events/schema.js";
import type { Sender } from "../core/events/sender.js";
import { mapExport, type RawEvent } from "./mapping.js";
import type { OtlpSpan } from "./trace-model.js";

export interface RefusedSpans {
  readonly reason: string;
  /** How many of the export's spans this refusal covers (a trace whose run_start fails: all of its spans). */
  readonly spans: number;
  /** The mapped events set aside (none for a malformed span, which maps to nothing). */
  readonly events: readonly RawEvent[];
}

export interface ExportEvents {
  readonly events: LoggedEvent[];
  readonly refused: RefusedSpans[];
}

/** The first ValidationError of an event, as text naming the field; undefined when it passes. */
function refusal(raw: RawEvent, sender: Sender, receivedAt: Date, runIds: Map<string, string>, out: LoggedEvent[]): string | undefined {
  const parsed = checkBuiltEvent(raw as unknown as IngestEvent);
  if (Either.isLeft(parsed)) return parsed.left.message;
  out.push(enrichEvent(parsed.right, sender, receivedAt, runIds));
  return undefined;
}

export function eventsOfSpans(spans: readonly OtlpSpan[], sender: Sender, receivedAtMs: number): ExportEvents {
  const mapped = mapExport(spans);
  const refused: RefusedSpans[] = mapped.refused.map((r) => ({ reason: r.reason, spans: 1, events: [] }));
  const receivedAt = new Date(receivedAtMs);
  const runIds = new Map<string, string>();
  const events: LoggedEvent[] = [];
  // Events go straight into `events`; a refused span's (or a trace's whose spans are all refused) are cut off again.
  for (const trace of mapped.traces) {
    const traceStart = events.length;
    const why = refusal(trace.runStart, sender, receivedAt, runIds, events);
    if (why !== undefined) {
      refused.push({ reason: `trace ${trace.traceId}: ${why}`, spans: trace.spans.length, events: [trace.runStart, ...trace.spans.flatMap((s) => s.events)] });
      continue;
    }
    for (const span of trace.spans) {
      const spanStart = events.length;
      let spanWhy: string | undefined;
      for (const e of span.events) {
        spanWhy = refusal(e, sender, receivedAt, runIds, events);
        if (spanWhy !== undefined) break;
      }
      if (spanWhy === undefined) continue;
      events.length = spanStart;
      refused.push({ reason: `span ${span.index} (${String(span.events[0]!.span_id)}): ${spanWhy}`, spans: 1, events: span.events });
    }
    if (events.length === traceStart + 1) events.length = traceStart; // no span taken: no run_start either
  }
  return { events, refused };
}

/**
 * Everything POST /api/ingest/batch does with a body once it has been read: JSON (400), batch shape (422),
 * each event's schema (a 422 in its result) and enrichment, the serialised accepted events for the log, and
 * the 207 response text. Pure and thread-agnostic: it runs on the ingest decode thread (decode-thread.ts) or,
 * without one, on the request's own thread.
 */
import { Either } from "effect";
import { ValidationError } from "../../core/errors.js";
import { parseIngestEvent, type LoggedEvent } from "../../core/events/schema.js";
import { encodeEvents, type EncodedEvents } from "../../core/events/wire.js";
import { HttpProblem, toHttpError, type ErrorBody } from "../http-errors.js";
import { enrichEvent } from "../../core/events/enrich.js";
import type { Sender } from "../../core/events/sender.js";

export type DecodedBatch =
  | { readonly ok: true; readonly events: EncodedEvents; readonly accepted: number; readonly response: string }
  | { readonly ok: false; readonly status: number; readonly error: ErrorBody["error"] };

type BatchResult =
  | { index: number; status: 202; event_id: string; run_id: string; sdk_run_id: string }
  | { index: number; status: 422; error: ErrorBody["error"] };

const utf8 = new TextDecoder();

export function decodeIngestBatch(body: Uint8Array, sender: Sender, receivedAtMs: number, maxBatchEvents: number): DecodedBatch {
  try {
    return decode(body, sender, receivedAtMs, maxBatchEvents);
  } catch (err) {
    const e = toHttpError(err);
    if (e.status >= 500) throw err;
    return { ok: false, status: e.status, error: e.body.error };
  }
}

function decode(body: Uint8Array, sender: Sender, receivedAtMs: number, maxBatchEvents: number): DecodedBatch {
  const text = utf8.decode(body);
  if (text.length === 0) throw new HttpProblem(400, "malformed_json", "the request body is empty; expected a JSON object");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new HttpProblem(400, "malformed_json", `the request body is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ValidationError({ message: 'the body must be an object like {"events": [...]}', field: "events" });
  }
  const items = (parsed as { events?: unknown }).events;
  if (!Array.isArray(items)) throw new ValidationError({ message: "events is required and must be an array of events", field: "events" });
  if (items.length === 0) throw new ValidationError({ message: "events must contain at least one event", field: "events" });
  if (items.length > maxBatchEvents) {
    throw new ValidationError({ message: `a batch holds at most ${maxBatchEvents} events; got ${items.length}`, field: "events" });
  }
  const receivedAt = new Date(receivedAtMs);
  const results: BatchResult[] = new Array(items.length);
  const accepted: LoggedEvent[] = [];
  const runIds = new Map<string, string>();
  for (let i = 0; i < items.length; i++) {
    const event = parseIngestEvent(items[i]);
    if (Either.isLeft(event)) {
      results[i] = { index: i, status: 422, error: toHttpError(event.left).body.error };
    } else {
      const e = enrichEvent(event.right, sender, receivedAt, runIds);
      accepted.push(e);
      results[i] = { index: i, status: 202, event_id: e.event_id, run_id: e.run_id, sdk_run_id: e.sdk_run_id };
    }
  }
  return {
    ok: true,
    events: encodeEvents(accepted),
    accepted: accepted.length,
    response: JSON.stringify({ accepted: accepted.length, rejected: items.length - accepted.length, results }),
  };
}

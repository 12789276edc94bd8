/**
 * The event log for callers that hold decoded events (tests, benchmarks, dead-letter replay, a single ingested
 * event): encode on the way in, decode on the way out. The port itself carries only the wire form.
 */
import type { LoggedEvent } from "../events/schema.js";
import { decodeRecord, encodeEvents } from "../events/wire.js";
import type { ConsumeOptions, EventLog, LogConsumer } from "../ports/event-log.js";

export const appendEvents = (log: Pick<EventLog, "append">, events: readonly LoggedEvent[]): Promise<void> =>
  log.append(encodeEvents(events));

/** consume() with each record decoded; a record that is not JSON fails the batch (the log retries it). */
export const consumeEvents = (log: Pick<EventLog, "consume">, options: ConsumeOptions<LoggedEvent>): Promise<LogConsumer> =>
  log.consume({ ...options, handler: (records) => options.handler(records.map(decodeRecord)) });

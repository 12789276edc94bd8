/**
 * What the pipeline does with a batch of log records, on whichever thread it runs: decode them, dead-letter
 * records that are not events, and process the events with failure isolation (isolation.ts). It resolves only
 * when every record is stored or dead-lettered, so the log may commit: acknowledged = stored + dead-lettered.
 */
import { decodeBatch, recordAt, type EncodedBatch } from "../core/events/wire.js";
import type { LoggedEvent } from "../core/events/schema.js";
import type { Logger } from "../core/logger.js";
import { addDeadLetters, type NewDeadLetter } from "../stores/dead-letters.js";
import { processIsolated, storageProbe } from "./isolation.js";
import type { BatchProcessor } from "./batch-processor.js";
import type { PipelinePorts } from "./pipeline-ports.js";

export type RecordHandler = (batch: EncodedBatch) => Promise<void>;

/** What a dead letter keeps of an error: its name and message, and (for operators) where it was thrown. */
export function describeError(err: unknown): { error: string; errorAt: string } {
  if (err instanceof Error) {
    return { error: `${err.name}: ${err.message}`, errorAt: err.stack?.split("\n").slice(1, 6).map((l) => l.trim()).join("\n") ?? "" };
  }
  return { error: String(err), errorAt: "" };
}

/** The fields the processor relies on before any plugin runs (ingest wrote them; a foreign record may lack them). */
function isLoggedEvent(e: unknown): e is LoggedEvent {
  const x = e as Partial<LoggedEvent> | null;
  return (
    typeof x === "object" && x !== null && typeof x.event_id === "string" && Number.isSafeInteger(x.user_id) &&
    typeof x.sdk_run_id === "string" && typeof x.run_id === "string" && typeof x.event_type === "string" &&
    typeof x.payload === "object" && x.payload !== null && typeof x.occurred_at === "string" && typeof x.received_at === "string"
  );
}

export function createRecordHandler(
  processor: BatchProcessor,
  ports: Pick<PipelinePorts, "sql" | "clickhouse">,
  logger: Logger,
  options: { singleRetryDelaysMs?: readonly number[] } = {},
): RecordHandler {
  const storageUp = storageProbe(ports.sql, ports.clickhouse);
  return async (batch) => {
    const skipped = new Set<number>();
    const notEvents: NewDeadLetter[] = [];
    const decoded = decodeBatch(batch, (index, err) => {
      skipped.add(index);
      notEvents.push({ raw: recordAt(batch, index), error: `the log record is not JSON: ${describeError(err).error}` });
    });
    // The events, with each one's position in the batch (for its raw bytes), and the records that are not events.
    const events: LoggedEvent[] = [];
    const indexes: number[] = [];
    for (let i = 0, k = 0; i < batch.ends.length; i++) {
      if (skipped.has(i)) continue;
      const e = decoded[k++]!;
      if (isLoggedEvent(e)) {
        events.push(e);
        indexes.push(i);
      } else {
        notEvents.push({ raw: recordAt(batch, i), error: "the log record is JSON but not a Runwatch event" });
      }
    }
    if (notEvents.length) {
      logger.error("dead-lettering log records that are not events", { records: notEvents.length });
      await addDeadLetters(ports.sql, notEvents);
    }
    if (events.length === 0) return;
    // Looked up only when something is dead-lettered: a batch that stores cleanly builds no map.
    let positions: Map<LoggedEvent, number> | undefined;
    const positionOf = (e: LoggedEvent): number => (positions ??= new Map(events.map((ev, k) => [ev, indexes[k]!]))).get(e)!;
    await processIsolated(events, {
      process: processor,
      deadLetter: (failed) =>
        addDeadLetters(ports.sql, failed.map(({ event, error }) => ({ raw: recordAt(batch, positionOf(event)), event, ...describeError(error) }))),
      storageUp,
      logger,
      singleRetryDelaysMs: options.singleRetryDelaysMs,
    });
  };
}

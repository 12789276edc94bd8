/**
 * What the pipeline does with a batch of log records, on whichever thread it runs: decode them, dead-letter
 * records that are not events, and process the events with failure isolation (isolation.ts). It resolves only
 * when every record is stored or dead-lettered, so the log may commit: acknowledged = stored + dead-lettered.
 */
import { decodeBatch, recordAt, type EncodedBatch } from "../core/log/encoded-batch.js";
import type { LoggedEvent } from "../core/events/schema.js";
import type { Logger } from "../core/logger.js";
import { addDeadLetters, type NewDeadLetter } from "../stores/dead-letters.js";
import { processIsolated, storageProbe } from "./isolation.js";
import type { BatchProcessor, PipelinePorts } from "./runner.js";

export type RecordHandler = (batch: EncodedBatch) => Promise<void>;

/** The error text a dead letter keeps: the message, and where it was thrown. */
export function describeError(err: unknown): string {
  if (err instanceof Error) {
    const where = err.stack?.split("\n").slice(1, 4).map((l) => l.trim()).join(" | ");
    return where ? `${err.name}: ${err.message} (${where})` : `${err.name}: ${err.message}`;
  }
  return String(err);
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
    const events = decodeBatch(batch, (index, err) => {
      skipped.add(index);
      notEvents.push({ raw: recordAt(batch, index), error: `the log record is not JSON: ${describeError(err)}` });
    });
    if (notEvents.length) {
      logger.error("dead-lettering log records that are not JSON", { records: notEvents.length });
      await addDeadLetters(ports.sql, notEvents);
    }
    if (events.length === 0) return;
    let positions: Map<LoggedEvent, number> | undefined;
    const positionOf = (e: LoggedEvent): number => {
      if (!positions) {
        positions = new Map();
        for (let i = 0, k = 0; i < batch.ends.length; i++) if (!skipped.has(i)) positions.set(events[k++]!, i);
      }
      return positions.get(e)!;
    };
    await processIsolated(events, {
      process: processor,
      deadLetter: (e, err) => addDeadLetters(ports.sql, [{ raw: recordAt(batch, positionOf(e)), event: e, error: describeError(err) }]),
      storageUp,
      logger,
      singleRetryDelaysMs: options.singleRetryDelaysMs,
    });
  };
}

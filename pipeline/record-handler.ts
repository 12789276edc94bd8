/**
 * What the pipeline does with a batch of log records, on whichever thread it runs: decode them, expand OTLP export
 * records into their events (otlp/export-record.ts), dead-letter records that are not events, and process the
 * events with failure isolation (isolation.ts), at most `maxEvents` at a time (an export record is hundreds of
 * events). It resolves only when every record is stored or dead-lettered, so the log may commit:
 * acknowledged = stored + dead-lettered. A part stored before a later part fails is stored again when the log
 * hands the batch again, as duplicates: skipped.
 */
import { decodeBatch, recordAt, type EncodedBatch } from "../core/events/wire.js";
import type { LoggedEvent } from "../core/events/schema.js";
import { namesProject } from "../core/events/sender.js";
import { runIdFor } from "../core/ids.js";
import { SLICE_MS, TimeSlice } from "../core/time-slice.js";
import type { Logger } from "../core/logger.js";
import { isExportRecord, type ExportRecord } from "../core/events/export-record.js";
import { expandExportRecord } from "../otlp/export-record.js";
import { storeLogRecords, type LogRecordItem } from "./log-records.js";
import { addDeadLetters, type NewDeadLetter } from "../stores/dead-letters.js";
import { storageProbe } from "./isolation.js";
import { storeParts } from "./overlapped-parts.js";
import type { PartProcessor } from "./part-processor.js";
import type { PipelinePorts } from "./pipeline-ports.js";

/** Handles one batch; its bytes may be a lent view of shared memory (host.ts), so nothing keeps them past the answer. */
export type RecordHandler = (batch: EncodedBatch<ArrayBufferLike>) => Promise<void>;

/** What a dead letter keeps of an error: its name and message, and (for operators) where it was thrown. */
export function describeError(err: unknown): { error: string; errorAt: string } {
  if (err instanceof Error) {
    return { error: `${err.name}: ${err.message}`, errorAt: err.stack?.split("\n").slice(1, 6).map((l) => l.trim()).join("\n") ?? "" };
  }
  return { error: String(err), errorAt: "" };
}

/**
 * The fields the processor relies on before any plugin runs (ingest wrote them; a foreign record may lack them).
 * An event logged before projects existed has no project_id: it belongs to its user's personal project, which has
 * the user's id.
 */
function isLoggedEvent(e: unknown): e is LoggedEvent {
  const x = e as Partial<LoggedEvent> | null;
  return (
    typeof x === "object" && x !== null && typeof x.event_id === "string" && Number.isSafeInteger(x.user_id) &&
    typeof x.sdk_run_id === "string" && typeof x.run_id === "string" && typeof x.event_type === "string" &&
    typeof x.payload === "object" && x.payload !== null && typeof x.occurred_at === "string" && typeof x.received_at === "string" &&
    namesProject(x)
  );
}

export function createRecordHandler(
  processor: PartProcessor,
  ports: Pick<PipelinePorts, "sql" | "clickhouse">,
  logger: Logger,
  options: { singleRetryDelaysMs?: readonly number[]; maxEvents?: number; deadLetterMaxBytes?: number } = {},
): RecordHandler {
  const storageUp = storageProbe(ports.sql, ports.clickhouse);
  const deadLetter = async (letters: readonly NewDeadLetter[]) => {
    await addDeadLetters(ports.sql, letters, options.deadLetterMaxBytes);
    processor.counters.add("events_dead_lettered", letters.length);
  };
  const maxEvents = options.maxEvents ?? 5000;
  return async (batch) => {
    const skipped = new Set<number>();
    const notEvents: NewDeadLetter[] = [];
    // A dead letter's raw bytes are copied (`slice`): the batch may be a view the host lends only until the answer.
    const decoded = decodeBatch(batch, (index, err) => {
      skipped.add(index);
      notEvents.push({ raw: recordAt(batch, index).slice(), error: `the log record is not JSON: ${describeError(err).error}` });
    });
    // The records in log order: events as logged, and export records, expanded when their turn comes.
    const items: { readonly index: number; readonly event?: LoggedEvent; readonly record?: ExportRecord }[] = [];
    // OTLP log records join spans at read time: stored apart from the events' order (log-records.ts).
    const logRecords: LogRecordItem[] = [];
    for (let i = 0, k = 0; i < batch.ends.length; i++) {
      if (skipped.has(i)) continue;
      const e: unknown = decoded[k++]!;
      if (isLoggedEvent(e)) items.push({ index: i, event: e });
      else if (isExportRecord(e) && e.signal === "logs") logRecords.push({ record: e, raw: recordAt(batch, i).slice() });
      else if (isExportRecord(e)) items.push({ index: i, record: e });
      else notEvents.push({ raw: recordAt(batch, i).slice(), error: "the log record is JSON but not a Runwatch event" });
    }
    if (notEvents.length) {
      logger.error("dead-lettering log records that are not events", { records: notEvents.length });
      await deadLetter(notEvents);
    }
    // Looked up only when something is dead-lettered: a batch that stores cleanly builds no map. An event expanded
    // from an export record is kept as its own JSON: a replayed dead letter is an event record.
    let positions: Map<LoggedEvent, number> | undefined;
    const rawOf = (e: LoggedEvent): Uint8Array => {
      positions ??= new Map(items.filter((it) => it.event).map((it) => [it.event!, it.index]));
      const at = positions.get(e);
      return at === undefined ? Buffer.from(JSON.stringify(e)) : recordAt(batch, at).slice();
    };
    const isolation = {
      deadLetter: (failed: readonly { event: LoggedEvent; error: unknown }[]) =>
        deadLetter(failed.map(({ event, error }) => ({ raw: rawOf(event), event, ...describeError(error) }))),
      storageUp,
      logger,
      singleRetryDelaysMs: options.singleRetryDelaysMs,
    };
    // The next maxEvents events, mapping export records as needed: at most three parts' events are alive at a time
    // (one finishing its writes, one being stored, one being mapped).
    // Mapping gives the event loop a turn after each slice of work (an export record is a few ms), so the part being
    // stored goes on as soon as each of its storage calls answers, and the mapping fills the waits in between:
    // mapped in one go, it held up the stored part's next step for the whole part's mapping (docs/BENCHMARKS.md,
    // "Pipeline thread, per span").
    const unmappable: NewDeadLetter[] = [];
    const pending: LoggedEvent[] = [];
    let next = 0;
    const take = async (): Promise<LoggedEvent[]> => {
      const slice = new TimeSlice(SLICE_MS);
      while (pending.length < maxEvents && next < items.length) {
        const it = items[next++]!;
        if (it.event) pending.push(it.event);
        else {
          expandInto(pending, unmappable, it.record!, recordAt(batch, it.index));
          if (slice.due()) await slice.next();
        }
      }
      const part = pending.splice(0, maxEvents);
      processor.counters.add("events_received", part.length);
      return part;
    };
    // Each part is stored in log order; the next one is mapped while the current one waits on storage (the thread
    // would otherwise sit idle while ClickHouse and Postgres work), and its storing overlaps the current part's last
    // writes (overlapped-parts.ts).
    await storeParts(take, processor, isolation);
    if (unmappable.length) await deadLetter(unmappable);
    if (logRecords.length) await storeLogRecords(ports.clickhouse, logRecords, deadLetter, storageUp);
  };
}

/**
 * Adds an export record's events to `events`. Its malformed spans were refused when it was acknowledged; anything
 * else it cannot store (the mapping is total: not expected) is dead-lettered, as is a record whose body is not an
 * export.
 */
function expandInto(events: LoggedEvent[], deadLetters: NewDeadLetter[], record: ExportRecord, raw: Uint8Array): void {
  let expanded: ReturnType<typeof expandExportRecord>;
  try {
    expanded = expandExportRecord(record);
  } catch (err) {
    deadLetters.push({ raw: raw.slice(), projectId: record.project_id, error: `the OTLP export record cannot be mapped: ${describeError(err).error}` });
    return;
  }
  for (const e of expanded.events) events.push(e);
  for (const r of expanded.refused) {
    for (const e of r.events) {
      const sdkRunId = String(e.sdk_run_id);
      deadLetters.push({
        raw: Buffer.from(JSON.stringify(e)),
        event: { project_id: record.project_id, user_id: record.user_id, run_id: runIdFor(record.project_id, sdkRunId), sdk_run_id: sdkRunId, event_id: String(e.event_id), event_type: e.event_type as LoggedEvent["event_type"] },
        error: `an OTLP span the ingest rules refuse: ${r.reason}`,
      });
    }
  }
}

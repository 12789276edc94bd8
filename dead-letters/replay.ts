/**
 * Replay puts a dead letter back into the event log, as the event it was, after the storable-value rules
 * (core/events/storable.ts) repaired what they can; the pipeline then stores it like any event (dedup by
 * event_id makes a second replay store nothing new). A dead-lettered OTLP export record (a pipeline of an older
 * version that did not know the record, during a rolling upgrade) goes back as the record it was.
 */
import { exportRecordKey, isExportRecord } from "../core/events/export-record.js";
import type { LoggedEvent } from "../core/events/schema.js";
import { namesProject } from "../core/events/sender.js";
import { makeStorable } from "../core/events/storable.js";
import { encodeBatch } from "../core/events/wire.js";
import { appendEvents } from "../core/log/events.js";
import type { EventLog } from "../core/ports/event-log.js";
import type { Sql } from "../core/ports/sql.js";
import { markReplayed, pendingRecords, type DeadLetterFilter } from "../stores/dead-letters.js";

const utf8 = new TextDecoder("utf-8", { fatal: false });

export interface ReplayResult {
  /** Appended to the event log again. */
  readonly replayed: number;
  /** Left as they are: records that are not an event, or that were not kept (nothing to replay). */
  readonly skipped: { id: number; reason: string }[];
}

/**
 * Appends pending dead letters back to the event log (in the order they failed), then marks them replayed.
 * Identifiers are repaired too here, not refused: the operator chose to replay, and the event's other fields
 * would otherwise be lost. A replay that fails again comes back as a pending dead letter.
 */
export async function replayDeadLetters(sql: Sql, log: Pick<EventLog, "append">, f: DeadLetterFilter = {}): Promise<ReplayResult> {
  const skipped: { id: number; reason: string }[] = [];
  // What goes back, in the order it failed: runs of events, and export records one by one.
  const appends: (LoggedEvent[] | { readonly raw: Uint8Array; readonly key: string })[] = [];
  const ids: number[] = [];
  for (const { id, raw, dropped } of await pendingRecords(sql, f)) {
    if (dropped) {
      skipped.push({ id, reason: "its record was not kept (the tenant's dead letters were at RUNWATCH_DEAD_LETTER_MAX_BYTES)" });
      continue;
    }
    try {
      const record = JSON.parse(utf8.decode(raw)) as unknown;
      if (isExportRecord(record)) {
        appends.push({ raw, key: exportRecordKey(record.project_id) });
      } else {
        const event = record as LoggedEvent;
        if (typeof event !== "object" || event === null || typeof event.event_id !== "string" || typeof event.user_id !== "number" ||
          !namesProject(event as { project_id?: unknown; user_id?: unknown })) {
          throw new Error("the record is not a Runwatch event");
        }
        let run = appends[appends.length - 1];
        if (!Array.isArray(run) || run.length >= 500) appends.push((run = []));
        run.push(makeStorable(event, { identifiers: new Set() }));
      }
      ids.push(id);
    } catch (err) {
      skipped.push({ id, reason: (err as Error).message });
    }
  }
  if (ids.length === 0) return { replayed: 0, skipped };
  // Marked first: the pipeline may fail the replayed event again before this call returns, and its new
  // failure (which clears replayed_at) must win over this mark.
  await markReplayed(sql, ids);
  try {
    for (const a of appends) {
      if (Array.isArray(a)) await appendEvents(log, a);
      else await log.append({ ...encodeBatch([a.raw]), keys: [a.key] });
    }
  } catch (err) {
    await markReplayed(sql, ids, false).catch(() => {});
    throw err;
  }
  return { replayed: ids.length, skipped };
}

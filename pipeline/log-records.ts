/**
 * The pipeline's part for OTLP log export records (`"signal":"logs"`): their rows (otlp/logs-mapping.ts) go to
 * otel_logs and the scores they give to `scores`, once per batch. Log rows join spans and runs at read time, by ids,
 * so they need no place in the event order; the batch still resolves only once they are stored or dead-lettered
 * (acknowledged = stored + dead-lettered). Rows derive their ids from the record, so a batch handed again after a
 * failure writes the same rows, which fold.
 */
import type { ExportRecord } from "../core/events/export-record.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import { expandLogsRecord } from "../otlp/logs-mapping.js";
import type { NewDeadLetter } from "../stores/dead-letters.js";
import { insertLogRows, type LogRow } from "../stores/otel-logs.js";
import { insertScoreRows } from "../stores/scores.js";

export interface LogRecordItem {
  readonly record: ExportRecord;
  /** The record's bytes, copied (kept for a dead letter). */
  readonly raw: Uint8Array;
}

/**
 * Stores the records' rows. A record that is not a log export is dead-lettered; when the insert fails while storage
 * answers (so retrying would fail again), the records are; when storage is down, it throws and the log hands the batch
 * again.
 */
export async function storeLogRecords(
  ch: ClickHouse, items: readonly LogRecordItem[], deadLetter: (letters: readonly NewDeadLetter[]) => Promise<void>, storageUp: () => Promise<boolean>,
): Promise<void> {
  const rows: LogRow[] = [];
  const scores: Record<string, unknown>[] = [];
  const letters: NewDeadLetter[] = [];
  const mapped: LogRecordItem[] = [];
  for (const it of items) {
    try {
      const out = expandLogsRecord(it.record);
      for (const r of out.rows) rows.push(r);
      for (const s of out.scores) scores.push(s);
      mapped.push(it);
    } catch (err) {
      letters.push({ raw: it.raw, projectId: it.record.project_id, error: `the OTLP log export record cannot be mapped: ${(err as Error).message}` });
    }
  }
  try {
    await insertLogRows(ch, rows);
    if (scores.length > 0) await insertScoreRows(ch, scores);
  } catch (err) {
    if (!(await storageUp())) throw err;
    for (const it of mapped) letters.push({ raw: it.raw, projectId: it.record.project_id, error: `the OTLP log records could not be stored: ${(err as Error).message}` });
  }
  if (letters.length > 0) await deadLetter(letters);
}

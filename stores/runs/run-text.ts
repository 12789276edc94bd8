/**
 * The free-text rows of runs (ClickHouse `run_text`, migration 180): one per text a run can be found by — a
 * run_start's input, a run_end's output, an error's message, a span's name — lower-cased and cut to RUN_TEXT_CHARS
 * (core/events/run-text.ts). plugins/run-text.ts makes them; a search reads them as
 * `external_id IN (SELECT sdk_run_id FROM run_text WHERE project_id = … AND text LIKE '%…%')`. Keyed by the event a
 * row came from, so a row written again (a replayed part) folds away. Retention deletes them with the run
 * (expired-runs.ts).
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { encodeLines } from "../../core/clickhouse/settings.js";
import { jsonString, jsonValue } from "../../core/json-text.js";
import { toChTime } from "./run-query.js";

export interface RunTextRow {
  readonly project_id: number;
  readonly run_id: string;
  readonly sdk_run_id: string;
  readonly event_id: string;
  /** ISO 8601: the event's occurred_at. */
  readonly at: string;
  readonly text: string;
}

const COLUMNS = ["project_id", "run_id", "sdk_run_id", "event_id", "at", "text"] as const;

const line = (r: RunTextRow): string =>
  `[${jsonValue(r.project_id)},${jsonString(r.run_id)},${jsonString(r.sdk_run_id)},${jsonString(r.event_id)},"${toChTime(r.at)}",${jsonString(r.text)}]\n`;

/** Stores run_text rows. */
export async function insertRunText(ch: ClickHouse, rows: readonly RunTextRow[]): Promise<void> {
  if (rows.length === 0) return;
  await ch.insertEncoded("run_text", { columns: COLUMNS, bytes: encodeLines(rows, line) });
}

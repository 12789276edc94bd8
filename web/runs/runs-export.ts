/**
 * The runs a filter matches as a file (docs/API.md, Export): JSON Lines, one run per line in the read API's shape
 * (core/events/run-json.ts; with `spans`, its spans beside it as GET /api/runs/{id}/spans builds them), or CSV with
 * the columns of EXPORT_COLUMNS. Made a page of the runs list at a time (EventStore.listRuns and its cursor), each
 * page written before the next is read, and only when the response's reader asks for more: an export of 100,000
 * runs holds one page in memory, never the file.
 */
import type { EventStore } from "../../core/ports/event-store.js";
import type { RunRecord } from "../../core/events/run.js";
import { runJson } from "../../core/events/run-json.js";
import { buildSpans } from "../../core/events/spans.js";
import type { RunsFilter, RunsSort } from "../../core/runs-filter/index.js";
import { csvCell } from "../../stores/datasets/export.js";
import { MAX_EVENTS_LIMIT } from "../../stores/runs/event-store.js";

export const EXPORT_FORMATS = ["csv", "jsonl"] as const;
export type RunsExportFormat = (typeof EXPORT_FORMATS)[number];
/** The most runs one export holds; with spans (each run's spans read apart), fewer. */
export const MAX_EXPORT_RUNS = 100_000;
export const MAX_EXPORT_RUNS_WITH_SPANS = 10_000;
/** Runs read per page of the list (its largest page). */
export const EXPORT_PAGE = 500;

/**
 * The CSV's columns, in order. models, tags and metadata are JSON (models empty where the JSON has null: a run recorded
 * before runs kept their models, core/events/run-json.ts); times UTC ISO; duration_ms empty until the run ended.
 */
export const EXPORT_COLUMNS = [
  "sdk_run_id", "run_id", "agent_name", "status", "started_at", "ended_at", "duration_ms", "model", "models",
  "prompt_tokens", "completion_tokens", "total_tokens", "cost_usd", "config_version", "session_id",
  "end_user", "environment", "release", "tags", "metadata", "input_preview", "output_preview",
  "event_count", "error_count", "last_error",
] as const;

export interface RunsExport {
  readonly filter: RunsFilter;
  readonly sort: RunsSort;
  readonly format: RunsExportFormat;
  readonly spans: boolean;
  /** The most runs to write (≤ MAX_EXPORT_RUNS, or MAX_EXPORT_RUNS_WITH_SPANS with spans). */
  readonly limit: number;
}

/** A run's metadata with each value back to its JSON type (the row holds it as JSON text). */
function metadataOf(run: RunRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(run.metadata ?? {})) {
    try {
      out[k] = JSON.parse(v);
    } catch {
      out[k] = v;
    }
  }
  return out;
}

function csvRow(run: RunRecord): string {
  const j = runJson(run);
  const number = (n: number | null) => (n === null ? "" : String(n));
  return [
    csvCell(j.sdk_run_id), j.run_id, csvCell(j.agent_name), j.status, j.started_at ?? "", j.ended_at ?? "", number(j.duration_ms), csvCell(j.model),
    j.models === null ? "" : csvCell(JSON.stringify(j.models)),
    number(j.prompt_tokens), number(j.completion_tokens), number(j.total_tokens), number(j.cost_usd), number(j.config_version), csvCell(run.session_id),
    csvCell(run.end_user ?? ""), csvCell(run.environment ?? ""), csvCell(run.release ?? ""), csvCell(JSON.stringify(run.tags ?? [])), csvCell(JSON.stringify(metadataOf(run))),
    csvCell(run.input_preview ?? ""), csvCell(run.output_preview ?? ""), number(j.event_count), number(j.error_count), csvCell(j.last_error),
  ].join(",");
}

async function jsonLine(events: EventStore, projectId: number, run: RunRecord, spans: boolean): Promise<string> {
  if (!spans) return JSON.stringify(runJson(run));
  const s = buildSpans(await events.listSpanEvents(projectId, run.run_id, { limit: MAX_EVENTS_LIMIT }));
  return JSON.stringify({ ...runJson(run), spans: s });
}

/** The export's text, a page of runs per chunk (the CSV's header first); lazy: a page is read when asked for. */
export async function* runsExportChunks(events: EventStore, projectId: number, x: RunsExport, pageSize = EXPORT_PAGE): AsyncGenerator<string> {
  if (x.format === "csv") yield `${EXPORT_COLUMNS.join(",")}\r\n`;
  let cursor: string | undefined;
  let written = 0;
  while (written < x.limit) {
    const page = await events.listRuns(projectId, { filter: x.filter, sort: x.sort, cursor, limit: Math.min(pageSize, x.limit - written) });
    const lines: string[] = [];
    for (const run of page.runs) lines.push(x.format === "csv" ? `${csvRow(run)}\r\n` : `${await jsonLine(events, projectId, run, x.spans)}\n`);
    written += page.runs.length;
    if (lines.length) yield lines.join("");
    if (!page.next_cursor || page.runs.length === 0) return;
    cursor = page.next_cursor;
  }
}

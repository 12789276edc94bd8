/**
 * A dataset version as a file (`runwatch datasets export`): JSON Lines, one item object per line (what an import
 * reads back), or CSV with the columns id, input, expected_output, metadata, source, status (JSON in the cells that
 * are not text). A CSV cell that a spreadsheet would run as a formula (starting with =, +, -, @, a tab or a carriage
 * return) is written with a leading apostrophe, the usual defence against CSV formula injection.
 */
import type { DatasetItem } from "./datasets.js";

export const EXPORT_FORMATS = ["jsonl", "csv"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

const itemLine = (i: DatasetItem) => JSON.stringify({
  id: i.id, input: i.input, expected_output: i.expected_output, metadata: i.metadata, status: i.status,
  ...(i.source_sdk_run_id ? { source_sdk_run_id: i.source_sdk_run_id } : {}),
  ...(i.source_span_id ? { source_span_id: i.source_span_id } : {}),
});

const FORMULA = /^[=+\-@\t\r]/;

/** One CSV cell: text as it is (JSON for other values), defused when it starts like a formula, quoted when needed. */
export function csvCell(value: unknown): string {
  let text = typeof value === "string" ? value : value === null || value === undefined ? "" : JSON.stringify(value);
  if (FORMULA.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function exportItems(items: readonly DatasetItem[], format: ExportFormat): string {
  if (format === "jsonl") return items.map((i) => `${itemLine(i)}\n`).join("");
  const rows = items.map((i) => [i.id, i.input, i.expected_output, i.metadata, i.source, i.status].map(csvCell).join(","));
  return ["id,input,expected_output,metadata,source,status", ...rows].join("\r\n") + "\r\n";
}

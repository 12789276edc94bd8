/**
 * Dataset uploads (docs/EVALUATION.md, Import): JSON Lines (one item object per line, import-jsonl.ts) or CSV with a
 * header row and a column mapping (import-csv.ts). Every line is checked before anything is written, and a file
 * with bad lines is refused as a whole with each bad line's number and reason (at most MAX_LISTED_LINES listed):
 * nothing is half-imported. A file past a bound (items, columns, line length) is refused as soon as the reader
 * meets it, and reading gives the event loop a turn every few milliseconds (import-lines.ts says why).
 */
import type { NewItem } from "./items.js";
import { parseCsvItems, type ColumnMapping } from "./import-csv.js";
import { parseJsonLines } from "./import-jsonl.js";
import type { ImportFile } from "./import-lines.js";

export { MAX_IMPORT_COLUMNS } from "./csv-scan.js";
export { defaultMapping, parseCsvItems, type ColumnMapping } from "./import-csv.js";
export { parseJsonLines } from "./import-jsonl.js";
export { MAX_LINE_BYTES, MAX_LISTED_LINES, type ImportFile } from "./import-lines.js";

export const IMPORT_FORMATS = ["jsonl", "csv"] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** The format a Content-Type names; undefined for any other. */
export function importFormatOf(contentType: string | undefined): ImportFormat | undefined {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  if (type === "application/x-ndjson" || type === "application/jsonl" || type === "application/x-jsonlines") return "jsonl";
  if (type === "text/csv") return "csv";
  return undefined;
}

/** The items of an upload in `format` (a CSV's columns mapped by `mapping`), or a ValidationError naming why not. */
export function readImport(format: ImportFormat, file: ImportFile, mapping: ColumnMapping = {}): Promise<NewItem[]> {
  return format === "csv" ? parseCsvItems(file, mapping) : parseJsonLines(file);
}

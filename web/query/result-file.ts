/**
 * A query's answer as a file (docs/API.md, POST /api/query/export): CSV with a header of the column names, or JSON
 * Lines, one object per row keyed by column name. CSV cells are quoted when needed and a text cell that a spreadsheet
 * would run as a formula (=, +, -, @, tab, CR first) is defused with a leading apostrophe, as every export of Runwatch
 * does (stores/datasets/export.ts csvCell); a numeric column's cells are written as they are, so -3 stays a number.
 * Written a slice of rows per chunk, so the response streams instead of being built whole.
 */
import type { QueryColumn, QueryResult } from "../../query/index.js";
import { csvCell } from "../../stores/datasets/export.js";
// The page's own reading of a column's type, so the file and the table agree on what is a number.
import { isNumericType } from "../static/query-results.js";

export const RESULT_FORMATS = ["csv", "jsonl"] as const;
export type ResultFormat = (typeof RESULT_FORMATS)[number];

/** A number as ClickHouse writes one (64-bit integers and decimals come as JSON strings). */
const NUMBER_TEXT = /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i;

function csvLine(row: readonly unknown[], numeric: readonly boolean[]): string {
  return row.map((v, i) => (numeric[i] && (typeof v === "number" || (typeof v === "string" && NUMBER_TEXT.test(v))) ? String(v) : csvCell(v))).join(",");
}

function jsonLine(row: readonly unknown[], columns: readonly QueryColumn[]): string {
  const o: Record<string, unknown> = {};
  columns.forEach((c, i) => { o[c.name] = row[i] ?? null; });
  return JSON.stringify(o);
}

/** The file's text in chunks of `rowsPerChunk` rows (the CSV's header first). */
export function* resultFileChunks(answer: QueryResult, format: ResultFormat, rowsPerChunk = 500): Generator<string> {
  const numeric = answer.columns.map((c) => isNumericType(c.type));
  if (format === "csv") yield `${answer.columns.map((c) => csvCell(c.name)).join(",")}\r\n`;
  for (let at = 0; at < answer.rows.length; at += rowsPerChunk) {
    const slice = answer.rows.slice(at, at + rowsPerChunk);
    yield slice.map((r) => (format === "csv" ? `${csvLine(r, numeric)}\r\n` : `${jsonLine(r, answer.columns)}\n`)).join("");
  }
}

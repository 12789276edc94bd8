/**
 * Dataset uploads (docs/EVALUATION.md, Import): JSON Lines (one item object per line) or CSV with a header row and
 * a column mapping. Every line is checked before anything is written, and a file with bad lines is refused as a
 * whole with each bad line's number and reason (at most MAX_LISTED_LINES listed): nothing is half-imported.
 * CSV cells are kept as the text they are (a cell starting with `=` stays text, never a formula: exports quote it),
 * except a cell of a one-column field that is a JSON object or array, which is read as JSON.
 */
import { parse as parseCsv } from "csv-parse/sync";
import { ValidationError, type LineProblem } from "../../core/errors.js";
import { checkUniqueIds, MAX_ITEMS_PER_WRITE, parseItem, type NewItem } from "./items.js";

export const IMPORT_FORMATS = ["jsonl", "csv"] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];
/** Most bad lines an answer lists (it says how many there were). */
export const MAX_LISTED_LINES = 100;

/** Which CSV columns make which part of an item; each part from one column (its value) or several (an object). */
export interface ColumnMapping {
  readonly id?: string;
  readonly input?: readonly string[];
  readonly expected_output?: readonly string[];
  readonly metadata?: readonly string[];
}

/** The format a Content-Type names; undefined for any other. */
export function importFormatOf(contentType: string | undefined): ImportFormat | undefined {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  if (type === "application/x-ndjson" || type === "application/jsonl" || type === "application/x-jsonlines") return "jsonl";
  if (type === "text/csv") return "csv";
  return undefined;
}

function refuse(problems: LineProblem[], total: number): never {
  const shown = problems.slice(0, MAX_LISTED_LINES);
  const more = problems.length > shown.length ? ` (the first ${shown.length} are listed)` : "";
  const first = shown[0]!;
  throw new ValidationError({
    field: "body",
    message: `${problems.length} of ${total} lines cannot be imported${more}; nothing was imported. Line ${first.line}: ${first.message}`,
    lines: shown,
  });
}

function tooMany(count: number): never {
  throw new ValidationError({ field: "body", message: `the file has ${count} items; one import may write at most ${MAX_ITEMS_PER_WRITE}` });
}

/** Items of a JSON Lines file; blank lines are skipped, every other line must be one item object. */
export function parseJsonLines(text: string): NewItem[] {
  const items: NewItem[] = [];
  const lineOf: number[] = [];
  const problems: LineProblem[] = [];
  const lines = text.split("\n");
  let total = 0;
  lines.forEach((raw, i) => {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() === "") return;
    total++;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      problems.push({ line: i + 1, message: `not valid JSON (${(err as Error).message})` });
      return;
    }
    try {
      items.push(parseItem(value, `line ${i + 1}`, "upload"));
      lineOf.push(i + 1);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      problems.push({ line: i + 1, field: err.field?.replace(/^line \d+\.?/, "") || undefined, message: err.message });
    }
  });
  return finish(items, lineOf, problems, total);
}

function finish(items: NewItem[], lineOf: number[], problems: LineProblem[], total: number): NewItem[] {
  if (total === 0) throw new ValidationError({ field: "body", message: "the file has no items" });
  if (total > MAX_ITEMS_PER_WRITE) tooMany(total);
  try {
    checkUniqueIds(items, (i) => `line ${lineOf[i]}`);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    const line = Number(/^line (\d+)/.exec(err.field ?? "")?.[1]);
    problems.push({ line, field: "id", message: err.message });
    problems.sort((a, b) => a.line - b.line);
  }
  if (problems.length) refuse(problems, total);
  return items;
}

const JSON_CONTAINER = /^\s*[[{]/;

/** A one-column part: JSON when the cell is a JSON object or array, else the cell's text. */
function cellValue(cell: string): unknown {
  if (!JSON_CONTAINER.test(cell)) return cell;
  try {
    return JSON.parse(cell);
  } catch {
    return cell;
  }
}

const EXPECTED_COLUMNS = ["expected_output", "expected"];

/**
 * The mapping used when a part names no columns: `id`, `expected_output` (or `expected`) and `metadata` by their
 * header, and `input` from a column named `input`, else from every column not taken by the others.
 */
export function defaultMapping(header: readonly string[], given: ColumnMapping): ColumnMapping {
  const has = (c: string) => header.includes(c);
  const id = given.id ?? (has("id") ? "id" : undefined);
  const expected = given.expected_output ?? EXPECTED_COLUMNS.filter(has).slice(0, 1);
  const metadata = given.metadata ?? (has("metadata") ? ["metadata"] : []);
  const taken = new Set([id, ...expected, ...metadata].filter(Boolean));
  const input = given.input ?? (has("input") ? ["input"] : header.filter((c) => !taken.has(c)));
  return { id, input, expected_output: expected, metadata };
}

/** Items of a CSV file with a header row, mapped by `mapping` (defaultMapping fills what it leaves out). */
export function parseCsvItems(text: string, given: ColumnMapping = {}): NewItem[] {
  let records: { record: Record<string, string>; info: { lines: number } }[];
  try {
    records = parseCsv(text, { columns: true, info: true, bom: true, skip_empty_lines: true, relax_quotes: false }) as typeof records;
  } catch (err) {
    const e = err as { lines?: number; message: string };
    throw new ValidationError({ field: "body", message: `the CSV cannot be read: ${e.message}`, lines: [{ line: e.lines ?? 1, message: e.message }] });
  }
  if (records.length > MAX_ITEMS_PER_WRITE) tooMany(records.length);
  const header = records[0] ? Object.keys(records[0].record) : [];
  const mapping = defaultMapping(header, given);
  for (const [part, columns] of Object.entries({ ...mapping, id: mapping.id ? [mapping.id] : [] })) {
    const missing = (columns as string[]).filter((c) => !header.includes(c));
    if (missing.length && records.length) {
      throw new ValidationError({ field: part, message: `${part} names ${missing.map((c) => JSON.stringify(c)).join(", ")}, which the CSV header does not have (it has ${header.map((c) => JSON.stringify(c)).join(", ")})` });
    }
  }
  if (!mapping.input?.length) throw new ValidationError({ field: "input", message: "no column is left for the input: name its columns with input=…" });
  const part = (row: Record<string, string>, columns: readonly string[] | undefined): unknown =>
    !columns?.length ? undefined : columns.length === 1 ? cellValue(row[columns[0]!]!) : Object.fromEntries(columns.map((c) => [c, row[c]]));
  const items: NewItem[] = [];
  const lineOf: number[] = [];
  const problems: LineProblem[] = [];
  for (const { record, info } of records) {
    const metadata = part(record, mapping.metadata);
    const raw = {
      ...(mapping.id && record[mapping.id] !== "" ? { id: record[mapping.id] } : {}),
      input: part(record, mapping.input),
      ...(mapping.expected_output?.length ? { expected_output: part(record, mapping.expected_output) } : {}),
      ...(metadata === undefined ? {} : { metadata: typeof metadata === "object" && metadata !== null && !Array.isArray(metadata) ? metadata : { value: metadata } }),
    };
    try {
      items.push(parseItem(raw, `line ${info.lines}`, "upload"));
      lineOf.push(info.lines);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      problems.push({ line: info.lines, field: err.field?.replace(/^line \d+\.?/, "") || undefined, message: err.message });
    }
  }
  return finish(items, lineOf, problems, records.length);
}

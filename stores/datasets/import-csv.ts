/**
 * CSV uploads (docs/EVALUATION.md, Import): a header row, then one item per record, its columns mapped to the
 * parts of an item. The input is an object keyed by column name (inputOf). Cells are kept as the text they are (a
 * cell starting with `=` stays text, never a formula: exports quote it), except a cell of a one-column expected output
 * or metadata, or of a column named `input`, that is a JSON object or array, which is read as JSON.
 *
 * Reading stops at the first bound passed (csv-scan.ts: the header's columns, each record's fields and bytes, the
 * number of records; then a header naming columns the mapping lacks, checked before any record is read), and the
 * records become items once all are read.
 */
import { ValidationError } from "../../core/errors.js";
import type { NewItem } from "./items.js";
import { readCsvRecords } from "./csv-records.js";
import { ImportedLines, type ImportFile } from "./import-lines.js";

/** Which CSV columns make which part of an item; each part from one column (its value) or several (an object). */
export interface ColumnMapping {
  readonly id?: string;
  readonly input?: readonly string[];
  readonly expected_output?: readonly string[];
  readonly metadata?: readonly string[];
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
  const names = new Set(header);
  const has = (c: string) => names.has(c);
  const id = given.id ?? (has("id") ? "id" : undefined);
  const expected = given.expected_output ?? EXPECTED_COLUMNS.filter(has).slice(0, 1);
  const metadata = given.metadata ?? (has("metadata") ? ["metadata"] : []);
  const taken = new Set([id, ...expected, ...metadata].filter(Boolean));
  const input = given.input ?? (has("input") ? ["input"] : header.filter((c) => !taken.has(c)));
  return { id, input, expected_output: expected, metadata };
}

/** The mapping of a header, or the refusal of a header lacking a column the mapping names. */
function mappingOf(header: readonly string[], given: ColumnMapping): ColumnMapping {
  const mapping = defaultMapping(header, given);
  const names = new Set(header);
  for (const [part, columns] of Object.entries({ ...mapping, id: mapping.id ? [mapping.id] : [] })) {
    const missing = (columns as string[]).filter((c) => !names.has(c));
    if (missing.length) {
      const listed = (cs: readonly string[]) => cs.map((c) => JSON.stringify(c)).join(", ");
      throw new ValidationError({ field: part, message: `${part} names ${listed(missing)}, which the CSV header does not have (it has ${listed(header)})` });
    }
  }
  if (!mapping.input?.length) throw new ValidationError({ field: "input", message: "no column is left for the input: name its columns with input=…" });
  return mapping;
}

/**
 * An item's input from its columns: an object keyed by column name, however many columns ({"question": "…"} from a
 * `question` column), the shape a run's input has when an item comes from a run, so a task reads both alike. A column
 * named `input` alone is the input itself (what an export writes there: its text, or its JSON object or array).
 */
function inputOf(record: Record<string, string>, columns: readonly string[]): unknown {
  if (columns.length === 1 && columns[0] === "input") return cellValue(record.input!);
  return Object.fromEntries(columns.map((c) => [c, record[c]]));
}

/** The raw item (before parseItem's checks) of one record. */
function rawItem(record: Record<string, string>, mapping: ColumnMapping): unknown {
  const part = (columns: readonly string[] | undefined): unknown =>
    !columns?.length ? undefined : columns.length === 1 ? cellValue(record[columns[0]!]!) : Object.fromEntries(columns.map((c) => [c, record[c]]));
  const metadata = part(mapping.metadata);
  return {
    ...(mapping.id && record[mapping.id] !== "" ? { id: record[mapping.id] } : {}),
    input: inputOf(record, mapping.input!),
    ...(mapping.expected_output?.length ? { expected_output: part(mapping.expected_output) } : {}),
    ...(metadata === undefined ? {} : { metadata: typeof metadata === "object" && metadata !== null && !Array.isArray(metadata) ? metadata : { value: metadata } }),
  };
}

/** Items of a CSV file with a header row, mapped by `given` (defaultMapping fills what it leaves out). */
export async function parseCsvItems(file: ImportFile, given: ColumnMapping = {}): Promise<NewItem[]> {
  const lines = new ImportedLines();
  let mapping: ColumnMapping | undefined;
  // Every record is read (and the bounds met) before any becomes an item: a file past a bound costs no item's work.
  const records: { record: Record<string, string>; line: number }[] = [];
  await readCsvRecords(file, {
    header: (names) => {
      mapping = mappingOf(names, given);
    },
    record: (record, line) => {
      lines.count();
      records.push({ record, line });
    },
    between: () => lines.yieldIfDue(),
  });
  for (const { record, line } of records) {
    lines.add(rawItem(record, mapping!), line);
    await lines.yieldIfDue();
  }
  return lines.finish();
}

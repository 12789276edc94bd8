/**
 * The records of a CSV upload: the whole file is scanned for its bounds first (csv-scan.ts), its bytes kept as
 * they arrive, then read by csv-parse's streaming parser CHUNK_BYTES at a time, the header handed on before any
 * record and every record as it ends, so a handler that throws stops the reading there.
 */
import { CsvError, Parser } from "csv-parse";
import { chunksOf, type ImportFile } from "./import-lines.js";
import { CsvScan, MAX_IMPORT_COLUMNS, tooManyColumns, unreadableLine } from "./csv-scan.js";

export interface CsvHandlers {
  /** The header's names; throws to refuse the file. */
  header(names: string[]): void;
  /** One record by the header's names, and the line it ends on; throws to stop reading. */
  record(record: Record<string, string>, line: number): void;
  /** Between chunks: a turn for the event loop when the time slice is used up. */
  between(): Promise<void>;
}

/** Bytes scanned at once. */
const SCAN_BYTES = 64 * 1024;
/**
 * Bytes written to the parser at once. Small: csv-parse spends microseconds on each record it emits (it copies its
 * state for every one), so a 16 KiB chunk of one-character rows (8,192 records) held the event loop for tens of
 * milliseconds or more (docs/BENCHMARKS.md, "Pages and uploads").
 */
const CHUNK_BYTES = 1024;

/** A CSV syntax error as a refusal of the file naming its line; anything else as it is. */
function refusal(err: unknown): unknown {
  if (!(err instanceof CsvError)) return err;
  return unreadableLine((err as CsvError & { lines?: number }).lines ?? 1, err.message);
}

/** Reads the file's header and records into `on` (BOM skipped, empty lines skipped, quotes strict). */
export async function readCsvRecords(file: ImportFile, on: CsvHandlers): Promise<void> {
  const scan = new CsvScan();
  const kept: Buffer[] = [];
  for await (const chunk of chunksOf(file, SCAN_BYTES)) {
    scan.look(chunk);
    kept.push(chunk);
    await on.between();
  }
  scan.end();
  const parser = new Parser({
    bom: true,
    // The scan's line break, so the parser does not look for it (its search allocates at every byte until it finds
    // one: a 200,000-column header took seconds). A file without any outside quotes has one record: any will do.
    record_delimiter: scan.lineBreak ?? "\n",
    skip_empty_lines: true,
    relax_quotes: false,
    columns: (names: string[]) => {
      if (names.length > MAX_IMPORT_COLUMNS) throw tooManyColumns(names.length); // the scan's count, should they differ
      on.header(names);
      return names;
    },
    on_record: (record, context) => {
      // With `columns`, a record is an object by the header's names (csv-parse's types say string[] whatever the options).
      on.record(record as unknown as Record<string, string>, context.lines);
      return null; // nothing for the stream's readable side: the records are taken here
    },
  });
  parser.on("error", () => {}); // each error also reaches the write or end that met it
  try {
    for (const bytes of kept) {
      for (let at = 0; at < bytes.length; at += CHUNK_BYTES) {
        await new Promise<void>((resolve, reject) => parser.write(bytes.subarray(at, at + CHUNK_BYTES), (err) => (err ? reject(err) : resolve())));
        await on.between();
      }
    }
    await new Promise<void>((resolve, reject) => {
      parser.once("error", reject);
      parser.once("finish", resolve);
      parser.end();
    });
  } catch (err) {
    throw refusal(err);
  }
}

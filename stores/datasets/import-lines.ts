/**
 * What both upload formats share (stores/datasets/import.ts): the file as chunks, the bounds, and the collection of
 * its items line by line — each bad line noted with its number, the file refused as a whole once it is read
 * (nothing is half-imported), or at once when a bound is passed.
 *
 * Why bounds first: an upload may be 32 MiB, and parsing all of it into records before counting them made one
 * request take gigabytes and minutes of the event loop the whole instance shares. A reader finds and counts a
 * file's lines before it parses any, stops at the first bound passed, and does its work in time slices
 * (core/time-slice.ts), giving the event loop a turn every few milliseconds.
 */
import { ValidationError, type LineProblem } from "../../core/errors.js";
import { TimeSlice } from "../../core/time-slice.js";
import { checkUniqueIds, MAX_ITEM_BYTES, MAX_ITEMS_PER_WRITE, parseItem, type NewItem } from "./items.js";

/** Most bad lines an answer lists (it says how many there were). */
export const MAX_LISTED_LINES = 100;
/**
 * Longest line (JSON Lines) or record (CSV), in bytes: an item holds at most MAX_ITEM_BYTES of JSON; the rest is
 * room for its id, keys, quoting and spacing. A longer one is not parsed at all.
 */
export const MAX_LINE_BYTES = 2 * MAX_ITEM_BYTES;

/**
 * An upload: its text (the dashboard's form, the CLI), its bytes, or its bytes as they arrive (an HTTP body, read by
 * the web layer with its size limit): a reader that stops at a bound leaves the rest unread.
 */
export type ImportFile = string | Uint8Array | AsyncIterable<Uint8Array>;

const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * The file's bytes in chunks of at most `size` bytes (views, not copies): the most a reader takes at once, between
 * two looks at its bounds and at the time slice.
 */
export async function* chunksOf(file: ImportFile, size: number): AsyncGenerator<Buffer> {
  const pieces = typeof file === "string" ? [Buffer.from(file, "utf8")] : file instanceof Uint8Array ? [file] : file;
  for await (const piece of pieces) {
    const bytes = asBuffer(piece);
    for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
  }
}

/** The refusal of a file with more lines than one import may write; thrown as soon as the reader counts one more. */
export function tooManyItems(): ValidationError {
  return new ValidationError({ field: "body", message: `the file has more than ${MAX_ITEMS_PER_WRITE} items; one import may write at most ${MAX_ITEMS_PER_WRITE}` });
}

/** The refusal of a line longer than MAX_LINE_BYTES. */
export const lineTooLongMessage = (line: number) => `line ${line} is longer than ${MAX_LINE_BYTES} bytes, the most one line of an import may hold`;

/** A file's items as its lines are read: items and bad lines, in time slices of the shared event loop. */
export class ImportedLines {
  private readonly items: NewItem[] = [];
  private readonly lineOf: number[] = [];
  private readonly problems: LineProblem[] = [];
  private total = 0;
  private readonly slice = new TimeSlice();

  /** Counts one more line; throws tooManyItems() past MAX_ITEMS_PER_WRITE. */
  count(): void {
    if (++this.total > MAX_ITEMS_PER_WRITE) throw tooManyItems();
  }

  /** The item of a counted line, or its problem noted. */
  add(raw: unknown, line: number): void {
    try {
      this.items.push(parseItem(raw, `line ${line}`, "upload"));
      this.lineOf.push(line);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      this.problem(line, err.message, err.field?.replace(/^line \d+\.?/, "") || undefined);
    }
  }

  /** Notes a counted line that cannot be imported. */
  problem(line: number, message: string, field?: string): void {
    this.problems.push({ line, ...(field ? { field } : {}), message });
  }

  /** Gives the event loop a turn when this slice has run its budget; readers call it between lines. */
  async yieldIfDue(): Promise<void> {
    if (this.slice.due()) await this.slice.next();
  }

  /** The items, or the refusal of the file naming its bad lines (ids given twice included). */
  finish(): NewItem[] {
    if (this.total === 0) throw new ValidationError({ field: "body", message: "the file has no items" });
    try {
      checkUniqueIds(this.items, (i) => `line ${this.lineOf[i]}`);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      const line = Number(/^line (\d+)/.exec(err.field ?? "")?.[1]);
      this.problems.push({ line, field: "id", message: err.message });
      this.problems.sort((a, b) => a.line - b.line);
    }
    if (this.problems.length) this.refuse();
    return this.items;
  }

  private refuse(): never {
    const shown = this.problems.slice(0, MAX_LISTED_LINES);
    const more = this.problems.length > shown.length ? ` (the first ${shown.length} are listed)` : "";
    const first = shown[0]!;
    throw new ValidationError({
      field: "body",
      message: `${this.problems.length} of ${this.total} lines cannot be imported${more}; nothing was imported. Line ${first.line}: ${first.message}`,
      lines: shown,
    });
  }
}

/**
 * The bounds of a CSV upload, met byte by byte before csv-parse reads any of it (csv-records.ts): the header's
 * columns (at most MAX_IMPORT_COLUMNS), each record's fields (no more than the header's) and bytes (at most
 * MAX_LINE_BYTES), and the number of records (at most MAX_ITEMS_PER_WRITE). A file past one is refused at that
 * byte, whatever follows; csv-parse would build every field and record first, at several microseconds each.
 *
 * The scan follows csv-parse's grammar with the options csv-records.ts gives it (comma, double quote, strict quotes,
 * empty lines skipped, a BOM skipped): a quote toggles quoting, which is the grammar wherever csv-parse accepts the
 * file (where it does not, it stops with an error at that point); records end at the file's line break only — the
 * first `\r\n`, `\n` or `\r` outside quotes, found here and told to csv-parse —, any other line break outside quotes
 * being a field's text; lines are counted as csv-parse counts them (every `\r\n`, `\n` or `\r`), for the messages.
 */
import { ValidationError } from "../../core/errors.js";
import { MAX_ITEMS_PER_WRITE } from "./items.js";
import { lineTooLongMessage, MAX_LINE_BYTES, tooManyItems } from "./import-lines.js";

/** Most columns a CSV upload may have: a header past it is refused as soon as its column 1,001 is seen. */
export const MAX_IMPORT_COLUMNS = 1_000;

export const tooManyColumns = (count: number | "more"): ValidationError =>
  new ValidationError({ field: "body", message: `the CSV header has ${count === "more" ? `more than ${MAX_IMPORT_COLUMNS}` : count} columns; an import may have at most ${MAX_IMPORT_COLUMNS}` });

/** A refusal of the file for what a line of it is, in the words of the parser's own refusals. */
export const unreadableLine = (line: number, message: string): ValidationError =>
  new ValidationError({ field: "body", message: `the CSV cannot be read: ${message}`, lines: [{ line, message }] });

const QUOTE = 0x22;
const COMMA = 0x2c;
const CR = 0x0d;
const NEWLINE = 0x0a;
const BOM = [0xef, 0xbb, 0xbf];

type LineBreak = "\r\n" | "\n" | "\r";

export class CsvScan {
  /** The file's line break, once one was seen outside quotes. */
  lineBreak: LineBreak | undefined;
  private quoted = false;
  private afterCr = false;
  private bomAt = 0;
  private line = 1;
  /** The current record: the line it starts on, its bytes (0: none yet, an empty line so far), its fields. */
  private recordLine = 1;
  private recordBytes = 0;
  private fields = 1;
  /** The header's columns, once it ended; then the records after it. */
  private columns: number | undefined;
  private records = 0;

  /** Scans the next bytes of the file; throws the refusal of the first bound they pass. */
  look(chunk: Buffer): void {
    let i = 0;
    while (this.bomAt < BOM.length && i < chunk.length) {
      if (chunk[i] !== BOM[this.bomAt]) {
        if (this.bomAt > 0) this.text(this.bomAt); // the start of a BOM, but not one: text
        this.bomAt = BOM.length;
        break;
      }
      this.bomAt++;
      i++;
    }
    for (; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (this.afterCr) {
        this.afterCr = false;
        if (b === NEWLINE) {
          this.lineBreakSeen("\r\n");
          continue;
        }
        this.lineBreakSeen("\r");
      }
      if (b === CR) this.afterCr = true;
      else if (b === NEWLINE) this.lineBreakSeen("\n");
      else {
        this.text(1);
        if (b === QUOTE) this.quoted = !this.quoted;
        else if (b === COMMA && !this.quoted) this.field();
      }
    }
  }

  /** The end of the file: its last record, if it has no line break after it. */
  end(): void {
    if (this.afterCr) this.lineBreakSeen("\r");
    this.afterCr = false;
    this.recordEnded();
  }

  private lineBreakSeen(kind: LineBreak): void {
    if (this.quoted) this.text(kind.length);
    else {
      this.lineBreak ??= kind;
      if (kind === this.lineBreak) this.recordEnded();
      else if (kind === "\r\n" && this.lineBreak === "\n") {
        this.text(1); // the \r is the field's text; the \n ends the record
        this.recordEnded();
      } else if (kind === "\r\n" && this.lineBreak === "\r") {
        this.recordEnded(); // the \r ends the record; the \n is the next one's text
        this.line++;
        this.text(1);
        return;
      } else this.text(kind.length);
    }
    this.line++;
  }

  /** Bytes of a record's text (a field's, a quote, a comma, a line break inside quotes). */
  private text(bytes: number): void {
    if (this.recordBytes === 0) this.recordLine = this.line;
    this.recordBytes += bytes;
    if (this.recordBytes > MAX_LINE_BYTES) throw unreadableLine(this.recordLine, lineTooLongMessage(this.recordLine));
  }

  private field(): void {
    this.fields++;
    if (this.columns === undefined) {
      if (this.fields > MAX_IMPORT_COLUMNS) throw tooManyColumns("more");
    } else if (this.fields > this.columns) {
      throw unreadableLine(this.recordLine, `line ${this.recordLine} has more fields than the header's ${this.columns}`);
    }
  }

  private recordEnded(): void {
    if (this.recordBytes === 0) return; // an empty line, skipped
    if (this.columns === undefined) this.columns = this.fields;
    else if (++this.records > MAX_ITEMS_PER_WRITE) throw tooManyItems();
    this.recordBytes = 0;
    this.fields = 1;
  }
}

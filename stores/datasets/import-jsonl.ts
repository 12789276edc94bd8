/**
 * JSON Lines uploads (docs/EVALUATION.md, Import): one item object per line, blank lines skipped.
 *
 * The file is read a chunk at a time and its lines found and counted before any is parsed, so reading stops at the
 * first bound: the line after MAX_ITEMS_PER_WRITE non-blank ones refuses the file, whatever its size, without a
 * line parsed; a line longer than MAX_LINE_BYTES is noted as a bad line without being kept or parsed.
 */
import type { NewItem } from "./items.js";
import { chunksOf, ImportedLines, lineTooLongMessage, MAX_LINE_BYTES, type ImportFile } from "./import-lines.js";

/** Splitting lines is cheap; the work of a line (parsing it, checking its item) is sliced line by line. */
const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;
const CR = 0x0d;

const isAsciiSpace = (b: number) => b === 0x20 || (b >= 0x09 && b <= 0x0d);

/**
 * Whether a line holds only whitespace, as String#trim sees it. ASCII decides at once (a line starts with `{`);
 * other bytes (U+00A0, U+FEFF...) are decoded.
 */
function isBlank(line: Buffer): boolean {
  let i = 0;
  while (i < line.length && isAsciiSpace(line[i]!)) i++;
  if (i === line.length) return true;
  if (line[i]! < 0x80) return false;
  return line.toString("utf8", i).trim() === "";
}

/** The line being read: its number and the bytes seen so far (none kept once it is too long). */
class PartialLine {
  number = 1;
  private parts: Buffer[] = [];
  private bytes = 0;

  append(bytes: Buffer): void {
    this.bytes += bytes.length;
    if (this.bytes > MAX_LINE_BYTES) this.parts = [];
    else if (bytes.length) this.parts.push(bytes);
  }

  /** An empty line ended: the next begins. */
  skip(): void {
    this.number++;
  }

  get empty(): boolean {
    return this.bytes === 0;
  }

  /** The line's bytes without its \r, or "too long"; and the next line begins. */
  take(): Buffer | "too long" {
    const whole = this.bytes > MAX_LINE_BYTES ? "too long" : this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.bytes);
    this.number++;
    this.parts = [];
    this.bytes = 0;
    return whole === "too long" || whole[whole.length - 1] !== CR ? whole : whole.subarray(0, -1);
  }
}

/** Items of a JSON Lines file; blank lines are skipped, every other line must be one item object. */
export async function parseJsonLines(file: ImportFile): Promise<NewItem[]> {
  const lines = new ImportedLines();
  const line = new PartialLine();
  const found: { number: number; bytes: Buffer | "too long" }[] = [];
  const ended = () => {
    const number = line.number;
    const bytes = line.take();
    if (bytes !== "too long" && isBlank(bytes)) return;
    lines.count();
    found.push({ number, bytes });
  };
  for await (const chunk of chunksOf(file, CHUNK_BYTES)) {
    for (let start = 0; start < chunk.length;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl === start && line.empty) line.skip();
      else {
        line.append(chunk.subarray(start, nl === -1 ? chunk.length : nl));
        if (nl === -1) break;
        ended();
      }
      start = nl + 1;
      if ((line.number & 1023) === 0) await lines.yieldIfDue();
    }
    await lines.yieldIfDue();
  }
  if (!line.empty) ended();
  for (const { number, bytes } of found) {
    await lines.yieldIfDue();
    if (bytes === "too long") {
      lines.problem(number, lineTooLongMessage(number));
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString("utf8"));
    } catch (err) {
      lines.problem(number, `not valid JSON (${(err as Error).message})`);
      continue;
    }
    lines.add(value, number);
  }
  return lines.finish();
}

/**
 * The bounds of an upload (stores/datasets/import.ts, csv-scan.ts): each refused as soon as it is passed, with the
 * bound in the message; a file read as it arrives, in chunks of any size, gives what it gives whole; and reading
 * gives the event loop turns.
 */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../core/errors.js";
import { MAX_ITEMS_PER_WRITE } from "./items.js";
import { MAX_IMPORT_COLUMNS, MAX_LINE_BYTES, parseCsvItems, parseJsonLines, type ImportFile } from "./import.js";

const refusal = async (read: Promise<unknown>): Promise<ValidationError> => {
  try {
    await read;
  } catch (err) {
    if (err instanceof ValidationError) return err;
    throw err;
  }
  throw new Error("not refused");
};

/** `text` as an HTTP body arrives: chunks of 1 to `most` bytes (cutting UTF-8 characters and \r\n pairs). */
async function* arriving(text: string, most = 7): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(text);
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const n = 1 + ((i * 7919) % most);
    yield bytes.subarray(at, at + n);
    at += n;
  }
}

/** Items without their generated ids, to compare two readings. */
const content = async (read: Promise<{ id: string }[]>) => (await read).map(({ id, ...rest }) => ({ id: /^[0-9a-f]{8}-/.test(id) ? "generated" : id, ...rest }));

const columns = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`).join(",");

describe("CSV bounds", () => {
  it(`refuses more than ${MAX_ITEMS_PER_WRITE} records at the next one, whatever comes after it`, async () => {
    const rows = `input\n${"a\n".repeat(MAX_ITEMS_PER_WRITE + 1)}`;
    // What follows the bound is never read: an unclosed quote there would otherwise be the refusal.
    expect(await refusal(parseCsvItems(`${rows}"never closed\n`))).toMatchObject({ field: "body", message: `the file has more than ${MAX_ITEMS_PER_WRITE} items; one import may write at most ${MAX_ITEMS_PER_WRITE}` });
    expect(await parseCsvItems(`input\n${"a\n".repeat(MAX_ITEMS_PER_WRITE)}`)).toHaveLength(MAX_ITEMS_PER_WRITE);
  });

  it(`refuses a header of more than ${MAX_IMPORT_COLUMNS} columns before reading on`, async () => {
    expect(await parseCsvItems(`${columns(MAX_IMPORT_COLUMNS)}\n${"x,".repeat(MAX_IMPORT_COLUMNS - 1)}x\n`)).toHaveLength(1);
    const wide = await refusal(parseCsvItems(`${columns(200_000)}\n"never closed`));
    expect(wide).toMatchObject({ field: "body", message: `the CSV header has more than ${MAX_IMPORT_COLUMNS} columns; an import may have at most ${MAX_IMPORT_COLUMNS}` });
    // Quoted commas are a column's text, not columns.
    expect(await parseCsvItems(`"${",".repeat(5_000)}"\nx\n`)).toHaveLength(1);
  });

  it("refuses a record with more fields than the header, or longer than MAX_LINE_BYTES, naming its line", async () => {
    expect(await refusal(parseCsvItems(`input\nok\n${",".repeat(30 << 20)}`))).toMatchObject({
      field: "body", message: "the CSV cannot be read: line 3 has more fields than the header's 1", lines: [{ line: 3 }],
    });
    const long = await refusal(parseCsvItems(`input\nok\n"${"a\n".repeat(MAX_LINE_BYTES / 2)}"\n`));
    expect(long).toMatchObject({ field: "body", lines: [{ line: 3 }] });
    expect(long.message).toBe(`the CSV cannot be read: line 3 is longer than ${MAX_LINE_BYTES} bytes, the most one line of an import may hold`);
  });

  it("reads a file arriving in chunks as it reads it whole: line breaks of each kind, quotes, UTF-8 cut anywhere", async () => {
    const files = [
      'id,input,expected\r\nq1,"Héllo, ""you""",1\r\n\r\nq2,"two\r\nlines","{""a"": [1]}"\r\n',
      "input,expected\nà\rb,1\n\nc,2",
      "\ufeffinput\rfirst\rsecond\r",
      'input\n"{""k"": ""é""}"\n',
    ];
    for (const text of files) {
      const whole = await content(parseCsvItems(text));
      expect(whole.length).toBeGreaterThan(0);
      expect(await content(parseCsvItems(arriving(text)))).toEqual(whole);
      expect(await content(parseCsvItems(arriving(text, 4096)))).toEqual(whole);
    }
    // A bare \r in a file of \n lines is a cell's text, as the parser reads it.
    expect((await parseCsvItems("input,expected\nà\rb,1\n"))[0]).toMatchObject({ input: "à\rb", expected_output: "1" });
  });
});

describe("JSON Lines bounds", () => {
  it(`refuses more than ${MAX_ITEMS_PER_WRITE} lines at the next one, before parsing any`, async () => {
    // Line 1 is not JSON, yet the count is the refusal: no line was parsed.
    const file = `{oops\n${'{"input":1}\n'.repeat(MAX_ITEMS_PER_WRITE)}`;
    expect(await refusal(parseJsonLines(file))).toMatchObject({ field: "body", message: `the file has more than ${MAX_ITEMS_PER_WRITE} items; one import may write at most ${MAX_ITEMS_PER_WRITE}` });
  });

  it("notes a line longer than MAX_LINE_BYTES as bad without parsing it, and reads the others", async () => {
    const file = `{"input": 1}\n{"input": "${"a".repeat(MAX_LINE_BYTES)}"}\n{"input": 2}\n{oops`;
    const err = await refusal(parseJsonLines(arriving(file, 65_536)));
    expect(err.lines).toEqual([
      { line: 2, message: `line 2 is longer than ${MAX_LINE_BYTES} bytes, the most one line of an import may hold` },
      { line: 4, message: expect.stringContaining("not valid JSON") },
    ]);
    expect(err.message).toMatch(/^2 of 4 lines cannot be imported/);
  });

  it("reads a file arriving in chunks as it reads it whole", async () => {
    const text = ['{"id": "a", "input": "é\\u0000"}', "", " \u00a0 ", '{"input": {"k": [1, 2]}, "metadata": {"m": "ü"}}', "\r"].join("\r\n");
    const whole = await content(parseJsonLines(text));
    expect(whole).toHaveLength(2);
    expect(await content(parseJsonLines(arriving(text)))).toEqual(whole);
  });
});

it("gives the event loop turns while it reads a large file", async () => {
  const reads: [string, (file: ImportFile) => Promise<unknown[]>, string][] = [
    ["csv", parseCsvItems, `id,question,expected\n${Array.from({ length: MAX_ITEMS_PER_WRITE }, (_, i) => `q${i},"What is ${i}+${i}?",${2 * i}`).join("\n")}`],
    ["jsonl", parseJsonLines, Array.from({ length: MAX_ITEMS_PER_WRITE }, (_, i) => JSON.stringify({ id: `q${i}`, input: { q: `What is ${i}+${i}?` } })).join("\n")],
  ];
  for (const [format, read, file] of reads) {
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const items = await read(file);
    clearInterval(ticker);
    expect(items, format).toHaveLength(MAX_ITEMS_PER_WRITE);
    expect(turns, format).toBeGreaterThan(3);
  }
});

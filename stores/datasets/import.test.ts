/**
 * Dataset uploads are checked line by line before anything is written (stores/datasets/import.ts): every bad line
 * is named by its number, and CSV columns map to the parts of an item, cells kept as text.
 */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../core/errors.js";
import { MAX_ITEMS_PER_WRITE } from "./items.js";
import { importFormatOf, parseCsvItems, parseJsonLines } from "./import.js";

const refusal = async (fn: () => Promise<unknown>): Promise<ValidationError> => {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ValidationError) return err;
    throw err;
  }
  throw new Error("not refused");
};

describe("JSON Lines", () => {
  it("reads one item per line, skipping blank lines, with defaults", async () => {
    const items = await parseJsonLines('{"input": "a", "expected_output": 1}\n\n{"id": "x", "input": {"q": "b"}, "metadata": {"k": 2}}\r\n');
    expect(items).toMatchObject([
      { input: "a", expected_output: 1, metadata: {}, source: "upload", status: "active" },
      { id: "x", input: { q: "b" }, expected_output: null, metadata: { k: 2 } },
    ]);
    expect(items[0]!.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("refuses a file with bad lines as a whole, naming each line", async () => {
    const lines = Array.from({ length: 12 }, (_, i) => JSON.stringify({ id: `i${i}`, input: i }));
    lines[2] = "{not json";
    lines[6] = JSON.stringify({ expected_output: 1 });
    lines[10] = JSON.stringify({ id: "i1", input: 1 });
    const err = await refusal(() => parseJsonLines(lines.join("\n")));
    expect(err.lines?.map((l) => l.line)).toEqual([3, 7, 11]);
    expect(err.lines?.[1]).toMatchObject({ field: "input", message: expect.stringContaining("line 7.input is required") });
    expect(err.lines?.[2]).toMatchObject({ field: "id", message: expect.stringContaining("is the id of line 2 too") });
    expect(err.message).toMatch(/^3 of 12 lines cannot be imported; nothing was imported\. Line 3: not valid JSON/);
  });

  it("refuses deep JSON, an empty file and more items than one write may hold", async () => {
    const deep = `{"input": ${"[".repeat(100)}${"]".repeat(100)}}`;
    expect((await refusal(() => parseJsonLines(deep))).lines?.[0]).toMatchObject({ line: 1, message: expect.stringContaining("nests deeper than") });
    expect((await refusal(() => parseJsonLines("\n \n"))).message).toBe("the file has no items");
    expect((await refusal(() => parseJsonLines('{"input":1}\n'.repeat(MAX_ITEMS_PER_WRITE + 1)))).message).toContain(`at most ${MAX_ITEMS_PER_WRITE}`);
  });

  it("repairs U+0000 in values but refuses it in an id", async () => {
    expect((await parseJsonLines(JSON.stringify({ input: "a\u0000b" })))[0]!.input).toBe("a\ufffdb");
    expect((await refusal(() => parseJsonLines(JSON.stringify({ id: "a\u0000b", input: 1 })))).lines?.[0]).toMatchObject({ line: 1, field: "id" });
  });
});

describe("CSV", () => {
  it("maps input, expected and metadata columns by their header, the rest into the input", async () => {
    const csv = "question,context,expected,id\n\"What is 2+2?\",math,4,q1\n\"Say \"\"hi\"\"\",chat,hi,q2\n";
    expect(await parseCsvItems(csv)).toMatchObject([
      { id: "q1", input: { question: "What is 2+2?", context: "math" }, expected_output: "4" },
      { id: "q2", input: { question: 'Say "hi"', context: "chat" }, expected_output: "hi" },
    ]);
    const mapped = await parseCsvItems(csv, { input: ["question"], metadata: ["context"] });
    // One column is an object keyed by its name too: the shape of a run's input.
    expect(mapped[0]).toMatchObject({ input: { question: "What is 2+2?" }, expected_output: "4", metadata: { value: "math" } });
  });

  it("reads a one-column JSON object or array as JSON, and keeps formulas as text", async () => {
    const csv = 'input,expected_output\n"{""a"": [1, 2]}","=HYPERLINK(""http://evil.example"",""click"")"\n@SUM(A1),+1\n';
    expect(await parseCsvItems(csv)).toMatchObject([
      { input: { a: [1, 2] }, expected_output: '=HYPERLINK("http://evil.example","click")' },
      { input: "@SUM(A1)", expected_output: "+1" },
    ]);
  });

  it("names a mapped column the header lacks, and a malformed file's line", async () => {
    expect(await refusal(() => parseCsvItems("a,b\n1,2\n", { input: ["q"] }))).toMatchObject({ field: "input", message: expect.stringContaining('"q"') });
    const broken = await refusal(() => parseCsvItems('a,b\n1,2\n3,"4\n5,6\n'));
    expect(broken.lines?.[0]?.line).toBeGreaterThanOrEqual(3);
    expect((await refusal(() => parseCsvItems("a,b\n1,2,3\n"))).message).toMatch(/cannot be read/);
  });
});

it("knows the upload formats by Content-Type", () => {
  expect(["text/csv; charset=utf-8", "application/x-ndjson", "application/jsonl", "application/json"].map(importFormatOf)).toEqual(["csv", "jsonl", "jsonl", undefined]);
});

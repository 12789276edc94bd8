/**
 * A query's answer as a file and as the page reads it: CSV quoting and formula defusing (numbers stay numbers),
 * JSON Lines keyed by column, the column types that are numbers or times, folded cells, the chart's series and a
 * refusal's words.
 */
import { describe, expect, it } from "vitest";
import { cellHtml, chartSeries, isNumericType, isTimeType, refusalText, rowCount } from "../static/query-results.js";
import type { QueryResult } from "../../query/index.js";
import { resultFileChunks } from "./result-file.js";

const answer: QueryResult = {
  columns: [{ name: "agent", type: "LowCardinality(String)" }, { name: "delta", type: "Int64" }, { name: "note", type: "Nullable(String)" }, { name: "tags", type: "Array(String)" }],
  rows: [
    ["=HYPERLINK(\"x\")", "-3", "said \"hi\", then left", ["a", "b"]],
    ["+plain", -4, null, []],
    ["@sum\nline", "7", "-1", ["=x"]],
  ],
  truncated: false, limit: null, elapsed_ms: 3,
};
const file = (format: "csv" | "jsonl", rowsPerChunk?: number) => [...resultFileChunks(answer, format, rowsPerChunk)];

describe("a query's answer as a file", () => {
  it("writes CSV with the names as header, quotes what needs it and defuses formulas in text but not numbers", () => {
    const chunks = file("csv", 2);
    expect(chunks).toHaveLength(3); // the header, then two rows, then one
    expect(chunks.join("")).toBe(
      "agent,delta,note,tags\r\n" +
      `"'=HYPERLINK(""x"")",-3,"said ""hi"", then left","[""a"",""b""]"\r\n` +
      "'+plain,-4,,[]\r\n" +
      `"'@sum\nline",7,'-1,"[""=x""]"\r\n`,
    );
  });

  it("writes JSON Lines, one object a row keyed by column, values as the engine gave them", () => {
    const lines = file("jsonl").join("").trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(lines).toEqual([
      { agent: "=HYPERLINK(\"x\")", delta: "-3", note: "said \"hi\", then left", tags: ["a", "b"] },
      { agent: "+plain", delta: -4, note: null, tags: [] },
      { agent: "@sum\nline", delta: "7", note: "-1", tags: ["=x"] },
    ]);
  });

  it("writes only the header for no rows", () => {
    expect([...resultFileChunks({ ...answer, rows: [] }, "csv")]).toEqual(["agent,delta,note,tags\r\n"]);
    expect([...resultFileChunks({ ...answer, rows: [] }, "jsonl")]).toEqual([]);
  });
});

describe("how the page reads an answer", () => {
  it("knows numbers and times through Nullable and LowCardinality", () => {
    for (const t of ["UInt8", "Int64", "Float64", "Nullable(Float32)", "Decimal(18, 4)", "LowCardinality(Nullable(UInt32))"]) expect([t, isNumericType(t)]).toEqual([t, true]);
    for (const t of ["String", "DateTime", "Array(Int64)", "Map(String, Float64)", "Interval"]) expect([t, isNumericType(t)]).toEqual([t, false]);
    for (const t of ["Date", "Date32", "DateTime", "DateTime('UTC')", "DateTime64(3, 'UTC')", "Nullable(DateTime64(3))"]) expect([t, isTimeType(t)]).toEqual([t, true]);
    for (const t of ["String", "UInt32", "DateTimeX"]) expect([t, isTimeType(t)]).toEqual([t, false]);
  });

  it("folds a long or multi-line cell, marks NULL and escapes", () => {
    const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
    expect(cellHtml(null, esc)).toContain("NULL");
    expect(cellHtml("<b>", esc)).toBe("&#60;b&#62;");
    expect(cellHtml({ a: 1 }, esc)).toBe("{&#34;a&#34;:1}");
    const long = cellHtml("x".repeat(500), esc);
    expect(long).toMatch(/^<details class="fold"><summary>x{80}…<\/summary><pre>x{500}<\/pre><\/details>$/);
    expect(cellHtml("one\ntwo", esc)).toContain("<summary>one…</summary>");
  });

  it("charts the first numeric column over the first time column, in time order, without rows that lack either", () => {
    const s = chartSeries(
      [{ name: "agent", type: "String" }, { name: "day", type: "Date" }, { name: "runs", type: "UInt64" }, { name: "cost", type: "Float64" }],
      [["a", "2026-12-03", "5", 1], ["b", "2026-12-01", "2", 2], ["c", null, "9", 3], ["d", "2026-12-02", null, 4]],
    );
    expect(s).toEqual({ x: "day", y: "runs", xs: [Date.parse("2026-12-01") / 1000, Date.parse("2026-12-03") / 1000], ys: [2, 5] });
    const t = chartSeries([{ name: "at", type: "DateTime64(3, 'UTC')" }, { name: "ms", type: "Float64" }], [["2026-12-06 10:00:00.500", 1]]);
    expect(t?.xs).toEqual([Date.parse("2026-12-06T10:00:00.500Z") / 1000]);
    expect(chartSeries([{ name: "agent", type: "String" }, { name: "runs", type: "UInt64" }], [["a", 1]])).toBeNull();
    expect(chartSeries([{ name: "day", type: "Date" }], [["2026-12-01"]])).toBeNull();
  });

  it("says a refusal's message with its field and limit, and counts rows", () => {
    expect(refusalText(422, { error: { code: "query_refused", message: "table system.tables is not documented", field: "sql" } })).toBe("Refused: table system.tables is not documented (field: sql)");
    expect(refusalText(413, { error: "the answer passed 8 MiB", limit: "bytes" })).toBe("Refused: the answer passed 8 MiB (limit: bytes)");
    expect(refusalText(502, null)).toBe("Refused: the server answered HTTP 502");
    expect([rowCount(1), rowCount(1000)]).toEqual(["1 row", "1,000 rows"]);
  });
});

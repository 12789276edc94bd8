import { describe, expect, it } from "vitest";
import { encodeLines, encodeLinesInSlices, encodeRows } from "./settings.js";

const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

describe("encodeLinesInSlices", () => {
  it("gives the UTF-8 bytes of every line in order, whatever characters fall on a chunk's edge", async () => {
    // Multi-byte and two-byte-string characters on both sides of the 64-line chunks, a lone surrogate, NUL.
    const texts = Array.from({ length: 200 }, (_, i) =>
      i % 63 === 0 ? `{"n":${i},"s":"€😀\u2028"}` : i === 64 ? '{"s":"\ud800 \u0000"}' : `{"n":${i}}`);
    const bytes = await encodeLinesInSlices(texts, (t) => `${t}\n`);
    expect(bytes.equals(Buffer.from(texts.map((t) => `${t}\n`).join("")))).toBe(true);
    expect(bytes.toString("utf8").split("\n").slice(0, -1)).toEqual(texts.map((t) => Buffer.from(t).toString("utf8")));
  });

  it("gives no bytes for no items, and one line's bytes for one item", async () => {
    expect((await encodeLinesInSlices([], () => "x\n")).byteLength).toBe(0);
    expect((await encodeLinesInSlices([1], (n) => `${n}\n`)).toString()).toBe("1\n");
  });

  it("has a form that makes every line before it returns, with the same bytes (encodeLines)", async () => {
    const items = Array.from({ length: 130 }, (_, i) => ({ n: i, s: i % 64 === 63 ? "€😀\u2028" : "x" }));
    const line = (r: { n: number; s: string }) => `${JSON.stringify(r)}\n`;
    const bytes = encodeLines(items, line);
    for (const r of items) r.n = -1; // what a later part may do to the records once the caller has its promise
    expect(bytes.equals(Buffer.from(Array.from({ length: 130 }, (_, i) => line({ n: i, s: i % 64 === 63 ? "€😀\u2028" : "x" })).join("")))).toBe(true);
    expect(encodeLines([], line).byteLength).toBe(0);
  });

  it("lets other work run while many lines are made", async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    const items = Array.from({ length: 640 }, (_, i) => i);
    const bytes = await encodeLinesInSlices(items, (i) => {
      busy(0.05); // 640 × 50 µs ≈ 32 ms of work: about ten 3 ms slices
      return `${i}\n`;
    });
    clearInterval(timer);
    expect(bytes.toString()).toBe(items.map((i) => `${i}\n`).join(""));
    expect(ticks).toBeGreaterThanOrEqual(3);
  });
});

describe("encodeRows", () => {
  it("names every column any row has, in the order first seen, and gives each row's values in that order", async () => {
    const rows = [{ a: 1, b: "x\n\"y\"" }, { b: "z", c: null }, { c: 2, a: undefined }];
    const { columns, bytes } = await encodeRows(rows);
    expect(columns).toEqual(["a", "b", "c"]);
    // A key a row lacks (or holds undefined) is null: the column's default once inserted (input_format_null_as_default).
    expect(bytes.toString().split("\n").slice(0, -1).map((l) => JSON.parse(l))).toEqual([[1, "x\n\"y\"", null], [null, "z", null], [null, null, 2]]);
  });
});

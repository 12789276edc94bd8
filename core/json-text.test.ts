import { describe, expect, it } from "vitest";
import { jsonString, jsonValue } from "./json-text.js";

describe("JSON text by hand", () => {
  it("writes exactly what JSON.stringify writes, for plain and hostile strings", () => {
    const strings = [
      "", "abc", "0190f0aa-1b2c-7d3e-8f40-123456789abc", "2026-11-26T12:00:00.123Z", "research agent", "run_end", "a_b-c:d.e",
      'quo"te', "back\\slash", "new\nline", "tab\t", "nul\u0000", "lone \ud800", "pair 😀", "é", "\u2028", "<script>", "a/b", "x\u007f",
    ];
    for (const s of strings) expect(jsonString(s), s).toBe(JSON.stringify(s));
    for (const v of [123, null, true, ["a"], { a: 1 }]) expect(jsonString(v as unknown as string)).toBe(JSON.stringify(v));
  });

  it("writes integers as they are and anything else as JSON.stringify does (null for undefined)", () => {
    for (const v of [0, 7, -3, 2 ** 53 - 1, null, 2 ** 53, 1.5, NaN, Infinity, "7", '1,"x"', true]) expect(jsonValue(v), String(v)).toBe(JSON.stringify(v));
    expect(jsonValue(undefined)).toBe("null");
  });

  it("writes any value as JSON.stringify writes it inside an array", () => {
    const values = [
      "plain", 'quo"te', "", 0, -0, 1.5, 1e21, 2 ** 64, NaN, -Infinity, null, undefined, true, false, [1, "a", null], { a: { b: [2] } },
      new Date(Date.UTC(2026, 10, 26)), () => 1, Symbol("s"), { toJSON: () => "custom" },
    ];
    for (const v of values) expect(jsonValue(v), String(typeof v === "symbol" ? "symbol" : v)).toBe(JSON.stringify([v]).slice(1, -1));
  });
});

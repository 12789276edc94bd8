import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClickHouse } from "../ports/clickhouse.js";
import { openChdb } from "./chdb.js";
import { inlineParams, MAX_INLINE_CHARS, quoteString } from "./inline-params.js";

const HOSTILE = [
  "a' OR 1=1 --",
  "a\\' OR 1=1 --",
  "back\\slash at the end\\",
  "'; DROP TABLE t; --",
  "quote '' doubled",
  "nul \u0000 tab \t newline \n cr \r bs \b ff \f",
  "é ✓ 😀 \u{10FFFF}",
  "{x:String} and {y:UInt64} inside a value",
  "",
];

describe("inlineParams", () => {
  it("writes each placeholder as a CAST of a quoted literal", () => {
    expect(inlineParams("SELECT {a:UInt64}, {b:String}, {c:Array(UUID)}", { a: 7, b: "x'y", c: ["00000000-0000-0000-0000-000000000001"] }))
      .toBe("SELECT CAST('7' AS UInt64), CAST('x\\'y' AS String), CAST(['00000000-0000-0000-0000-000000000001'] AS Array(UUID))");
    expect(quoteString("a\\'b")).toBe("'a\\\\\\'b'");
  });

  it("leaves a query bound when a value has no literal, a placeholder has no value, or the text grows too long", () => {
    expect(inlineParams("SELECT {a:Float64}", { a: Number.NaN })).toBeUndefined();
    expect(inlineParams("SELECT {a:String}", { a: { nested: 1 } })).toBeUndefined();
    expect(inlineParams("SELECT {a:String}", {})).toBeUndefined();
    expect(inlineParams("SELECT {a:Array(String)}", { a: Array.from({ length: 5_000 }, (_, i) => `key-${i}-${"k".repeat(20)}`) })).toBeUndefined();
    expect(inlineParams("SELECT {a:String}", { a: "x".repeat(MAX_INLINE_CHARS) })).toBeUndefined();
  });
});

describe("inlined values on chDB", () => {
  let dir = "";
  let ch: ClickHouse;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "runwatch-inline-"));
    ch = await openChdb(dir, "runwatch");
  });
  afterAll(async () => {
    await ch?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("round-trips hostile strings exactly, alone and in arrays (no value can end its literal)", async () => {
    for (const s of HOSTILE) {
      const sql = "SELECT {s:String} AS s, length({a:Array(String)}) AS n, {a:Array(String)}[2] AS second";
      expect(inlineParams(sql, { s, a: ["first", s] })).toBeDefined();
      const [row] = await ch.query<{ s: string; n: string; second: string }>(sql, { s, a: ["first", s] });
      expect(row).toEqual({ s, n: "2", second: s });
    }
  });

  it("parses numbers, UUIDs, dates and times as the placeholder's type, and refuses what does not fit", async () => {
    const [row] = await ch.query<Record<string, unknown>>(
      "SELECT {u:UInt64} + 1 AS u, {f:Float64} AS f, toString({id:UUID}) AS id, toString({d:Date}) AS d, toString({t:DateTime64(3, 'UTC')}) AS t, {ids:Array(UInt64)} AS ids",
      { u: 41, f: 2.5, id: "0190a2b4-0000-7000-8000-000000000001", d: "2026-11-27", t: "2026-11-27 10:00:00.123", ids: [1, 2] },
    );
    expect(row).toEqual({ u: "42", f: 2.5, id: "0190a2b4-0000-7000-8000-000000000001", d: "2026-11-27", t: "2026-11-27 10:00:00.123", ids: ["1", "2"] });
    await expect(ch.query("SELECT {u:UInt64} AS u", { u: "1 OR 1=1" })).rejects.toThrow();
  });
});

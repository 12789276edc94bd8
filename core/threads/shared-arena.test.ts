import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { isShared, SharedArena } from "./shared-arena.js";

describe("SharedArena", () => {
  it("lends views of shared memory that never overlap while lent, and reuses what is given back", () => {
    const arena = new SharedArena(1024);
    const a = arena.lend(100)!;
    const b = arena.lend(300)!;
    const c = arena.lend(200)!;
    expect([a, b, c].every(isShared)).toBe(true);
    expect([a.byteLength, b.byteLength, c.byteLength]).toEqual([100, 300, 200]);
    const ranges = [a, b, c].map((v) => [v.byteOffset, v.byteOffset + v.byteLength] as const).sort((x, y) => x[0] - y[0]);
    for (let i = 1; i < ranges.length; i++) expect(ranges[i]![0]).toBeGreaterThanOrEqual(ranges[i - 1]![1]);
    expect(arena.lend(500)).toBeUndefined(); // 1024 - 608 lent: no gap of 500

    arena.giveBack(b);
    const d = arena.lend(296)!; // first fit: b's gap
    expect(d.byteOffset).toBe(b.byteOffset);
    arena.giveBack(a);
    arena.giveBack(c);
    arena.giveBack(d);
    expect(arena.lentBytes).toBe(0);
    expect(arena.lend(1024)!.byteLength).toBe(1024);
    expect(arena.lend(1)).toBeUndefined();
    expect(new SharedArena(10).lend(11)).toBeUndefined();
  });

  it("lends nothing for no bytes, so a view given back is always the one lent at its start", () => {
    const arena = new SharedArena(64);
    const a = arena.lend(16)!;
    expect(arena.lend(0)).toBeUndefined();
    expect(arena.lendCopy(new Uint8Array(0))).toBeUndefined();
    arena.giveBack(a);
    expect(arena.lentBytes).toBe(0);
    expect(arena.lend(64)!.byteOffset).toBe(0);
  });

  it("refuses a view it did not lend, or one given back twice", () => {
    const arena = new SharedArena(64);
    const v = arena.lend(8)!;
    arena.giveBack(v);
    expect(() => arena.giveBack(v)).toThrow(/given back twice/);
    expect(() => arena.giveBack(new Uint8Array(8))).toThrow(/not a view this arena lent/);
  });

  it("sends a lent view as lent and takes it back once the send settles, rejected or not; other bytes as the caller's own", async () => {
    const arena = new SharedArena(64);
    const view = arena.lend(16)!;
    const seen: boolean[] = [];
    expect(await arena.send(view, async (lent) => (seen.push(lent), "answer"))).toBe("answer");
    expect(arena.lentBytes).toBe(0);
    const again = arena.lend(16)!;
    await expect(arena.send(again, async (lent) => { seen.push(lent); throw new Error("no answer"); })).rejects.toThrow("no answer");
    expect(arena.lentBytes).toBe(0);
    const own = new Uint8Array(16);
    arena.lend(8);
    await arena.send(own, async (lent) => { seen.push(lent); });
    expect(arena.lentBytes).toBe(8); // the caller's bytes are not given back for it
    expect(seen).toEqual([true, true, false]);
  });

  it("copies bytes into a lent view, or answers undefined when they do not fit", () => {
    const arena = new SharedArena(16);
    const copy = arena.lendCopy(Buffer.from("hello"))!;
    expect(Buffer.from(copy).toString()).toBe("hello");
    expect(arena.lendCopy(new Uint8Array(17))).toBeUndefined();
  });

  it("crosses to another thread by reference: the receiver reads the lender's bytes, and what it writes, the lender sees", async () => {
    const arena = new SharedArena(1 << 20);
    const view = arena.lendCopy(Buffer.from("from the lender"))!;
    const worker = new Worker(
      `const { parentPort } = require("node:worker_threads");
       parentPort.once("message", (v) => {
         const text = Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString();
         v[0] = 70; // "F"
         parentPort.postMessage({ text, shared: v.buffer instanceof SharedArrayBuffer });
       });`,
      { eval: true },
    );
    try {
      const answer = await new Promise<{ text: string; shared: boolean }>((resolve, reject) => {
        worker.once("message", resolve);
        worker.once("error", reject);
        worker.postMessage(view);
      });
      expect(answer).toEqual({ text: "from the lender", shared: true });
      expect(Buffer.from(view).toString()).toBe("From the lender");
    } finally {
      await worker.terminate();
    }
  });
});

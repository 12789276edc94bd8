/** The trace's skeleton cache: one read per run version, the reader's earlier read by cursor or version, bounds. */
import { describe, expect, it } from "vitest";
import { IDLE_MS, SkeletonCache } from "./trace-cache.js";
import type { Skeleton } from "./trace-skeleton.js";

const skeleton = (spans: number, cursor: string): Skeleton => ({
  spans: Array.from({ length: spans }, (_, i) => ({ span_id: `s${i}`, parent_span_id: null, name: "n", kind: "step", status: "ok", started_at: "", duration_ms: 1, model: null, tokens: null, cost_usd: null })),
  eventsOfSpan: new Map(), spanOfEvent: new Map(), range: { start: 0, end: 1 }, cursor: { cursor, n: spans },
});

describe("SkeletonCache", () => {
  it("reads a run once per version, and gives a reader the read it asks for by cursor or by starting version", async () => {
    const cache = new SkeletonCache();
    let reads = 0;
    const build = (cursor: string) => async () => { reads++; return skeleton(3, cursor); };
    const [a, b] = [cache.get("r", 1, undefined, build("c1")), cache.get("r", 1, undefined, build("c1"))];
    expect(await a).toBe(await b);
    expect(reads).toBe(1);
    // The run moved on: a reader paging from cursor c1, or whose page started at version 1, still gets that read.
    expect(await cache.get("r", 2, "c1", build("c2"))).toBe(await a);
    expect(await cache.get("r", 2, undefined, build("c2"), 1)).toBe(await a);
    expect(reads).toBe(1);
    const newer = await cache.get("r", 2, undefined, build("c2"));
    expect(newer.cursor.cursor).toBe("c2");
    expect(reads).toBe(2);
  });

  it("forgets a read that failed, and keeps at most its entries and spans, the least recently used going first", async () => {
    const cache = new SkeletonCache({ entries: 2, spans: 10 });
    await expect(cache.get("bad", 1, undefined, async () => { throw new Error("boom"); })).rejects.toThrow("boom");
    expect(cache.keys()).toEqual([]);
    await cache.get("a", 1, undefined, async () => skeleton(4, "a"));
    await cache.get("b", 1, undefined, async () => skeleton(4, "b"));
    await cache.get("a", 1, undefined, async () => skeleton(4, "a")); // a used again: b is the least recent
    await cache.get("c", 1, undefined, async () => skeleton(4, "c"));
    expect(cache.keys()).toEqual(["a", "c"]);
    await cache.get("d", 1, undefined, async () => skeleton(9, "d")); // 13 spans: over the bound
    expect(cache.keys()).toEqual(["d"]);
  });

  it("drops a run nobody asked for in IDLE_MS", async () => {
    let now = 0;
    const cache = new SkeletonCache(undefined, () => now);
    await cache.get("a", 1, undefined, async () => skeleton(2, "a"));
    now += IDLE_MS + 1;
    await cache.get("b", 1, undefined, async () => skeleton(2, "b"));
    expect(cache.keys()).toEqual(["b"]);
  });
});

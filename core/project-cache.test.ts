import { afterEach, describe, expect, it, vi } from "vitest";
import { memoryPubSub } from "./pubsub/memory.js";
import { ProjectCache, projectIdOf } from "./project-cache.js";

describe("ProjectCache", () => {
  afterEach(() => vi.useRealTimers());

  it("reads a key once within its TTL and again after it", () => {
    vi.useFakeTimers();
    const cache = new ProjectCache<number, string>({ ttlMs: 5_000 });
    let reads = 0;
    const load = () => `v${++reads}`;
    expect(cache.get(1, load)).toBe("v1");
    vi.advanceTimersByTime(4_000);
    expect(cache.get(1, load)).toBe("v1");
    vi.advanceTimersByTime(1_500);
    expect(cache.get(1, load)).toBe("v2");
  });

  it("reads only the missing keys, in one call", async () => {
    const cache = new ProjectCache<number, number[]>({ ttlMs: 60_000 });
    const calls: number[][] = [];
    const load = async (missing: number[]) => {
      calls.push(missing);
      return new Map(missing.map((p) => [p, [p * 10]]));
    };
    expect([...(await cache.getMany([1, 2], load))]).toEqual([[1, [10]], [2, [20]]]);
    expect([...(await cache.getMany([2, 3], load))]).toEqual([[2, [20]], [3, [30]]]);
    expect(calls).toEqual([[1, 2], [3]]);
  });

  it("drops a project's entry when a change names it, and every entry for a message naming none", async () => {
    const pubsub = memoryPubSub();
    const cache = new ProjectCache<number, string>({ ttlMs: Infinity });
    const unsubscribe = await cache.invalidateOn(pubsub, "rules.changed", projectIdOf);
    cache.get(1, () => "a");
    cache.get(2, () => "b");
    await pubsub.publish("rules.changed", "1");
    expect(cache.get(1, () => "a2")).toBe("a2");
    expect(cache.get(2, () => "b2")).toBe("b");
    await pubsub.publish("rules.changed", "all");
    expect(cache.size).toBe(0);
    await unsubscribe();
  });

  it("keeps at most maxEntries, dropping the oldest", () => {
    const cache = new ProjectCache<number, number>({ ttlMs: Infinity, maxEntries: 2 });
    cache.get(1, () => 1);
    cache.get(2, () => 2);
    cache.get(3, () => 3);
    expect(cache.size).toBe(2);
    expect(cache.get(1, () => 100)).toBe(100);
  });
});

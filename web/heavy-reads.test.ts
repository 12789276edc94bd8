import { describe, expect, it } from "vitest";
import { HeavyReads, MAX_WAITING } from "./heavy-reads.js";
import { HttpProblem } from "./http-errors.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("heavy reads", () => {
  it("runs one read at a time per user, other users' beside it, and refuses past MAX_WAITING waiting with 429 + Retry-After", async () => {
    const reads = new HeavyReads();
    let running = 0;
    let most = 0;
    const read = (user: number, log: string[], tag: string) => reads.run(user, async () => {
      running++;
      most = Math.max(most, running);
      log.push(`${tag}+`);
      await sleep(10);
      log.push(`${tag}-`);
      running--;
      return tag;
    });
    const a: string[] = [];
    const b: string[] = [];
    const mine = Array.from({ length: 1 + MAX_WAITING }, (_, i) => read(1, a, `a${i}`));
    const refused = read(1, a, "over").catch((e: unknown) => e);
    const other = read(2, b, "b0");
    expect(await Promise.all(mine)).toEqual(Array.from({ length: 1 + MAX_WAITING }, (_, i) => `a${i}`));
    expect(await other).toBe("b0");
    expect(a).toEqual(Array.from({ length: 1 + MAX_WAITING }, (_, i) => [`a${i}+`, `a${i}-`]).flat());
    expect(most).toBe(2); // user 1's one read and user 2's
    const err = (await refused) as HttpProblem;
    expect(err).toBeInstanceOf(HttpProblem);
    expect(err.status).toBe(429);
    expect(err.headers["Retry-After"]).toBe("2");
    // A failed read lets the next one in.
    await expect(reads.run(3, async () => { throw new Error("boom"); })).rejects.toThrow("boom");
    expect(await reads.run(3, async () => "after")).toBe("after");
  });
});

/**
 * The in-memory limiter's named budgets (the rate-limiter port, embedded): a budget keeps what each key consumed
 * across budget() calls — callers ask for it per request or per job — and a cap that changes does not start a new
 * count. The Redis adapter shares this code (core/limiter/decision.ts); test/scale/redis.test.ts runs it on Redis.
 */
import { describe, expect, it } from "vitest";
import { memoryRateLimiter } from "./memory.js";

describe("memoryRateLimiter budgets", () => {
  it("keep a key's count across budget() calls", async () => {
    const limiter = memoryRateLimiter(100);
    const allowed: boolean[] = [];
    for (let i = 0; i < 5; i++) allowed.push((await limiter.budget("evaluation.calls", 3, 60).consume("project:1")).allowed);
    expect(allowed).toEqual([true, true, true, false, false]);
    // Another key, and another budget's name, count on their own.
    expect((await limiter.budget("evaluation.calls", 3, 60).consume("project:2")).allowed).toBe(true);
    expect((await limiter.budget("test-send", 3, 60).consume("project:1")).allowed).toBe(true);
  });

  it("do not start again when the cap changes: a higher cap gives only the difference, refused calls not counted", async () => {
    const limiter = memoryRateLimiter(100);
    for (let i = 0; i < 3; i++) expect((await limiter.budget("evaluation.calls", 3, 60).consume("project:1")).allowed).toBe(true);
    expect((await limiter.budget("evaluation.calls", 2, 60).consume("project:1")).allowed).toBe(false);
    const raised = limiter.budget("evaluation.calls", 5, 60);
    expect(await raised.peek("project:1")).toMatchObject({ allowed: true, limit: 5, remaining: 2 });
    // What was refused is not counted: 5 leaves two more.
    const more = [await raised.consume("project:1"), await raised.consume("project:1"), await raised.consume("project:1")];
    expect(more.map((d) => [d.allowed, d.remaining])).toEqual([[true, 1], [true, 0], [false, 0]]);
  });

  it("say how many are left and when the window ends", async () => {
    const limiter = memoryRateLimiter(100);
    const budget = limiter.budget("login-ip", 2, 60);
    const first = await budget.consume("10.0.0.1");
    expect(first).toMatchObject({ allowed: true, limit: 2, remaining: 1 });
    expect(first.resetMs).toBeGreaterThan(59_000);
    await budget.consume("10.0.0.1");
    expect(await limiter.budget("login-ip", 2, 60).peek("10.0.0.1")).toMatchObject({ allowed: false, remaining: 0 });
    await limiter.budget("login-ip", 2, 60).reset("10.0.0.1");
    expect((await budget.consume("10.0.0.1")).allowed).toBe(true);
  });
});

/**
 * Redis adapters against a real server (REDIS_URL): the rate limit is shared by two limiter instances
 * (as by two ingest processes), a Redis outage falls back to the insurance limiter without hanging,
 * pub/sub crosses connections with prefix filtering, and REDIS_PREFIX keeps deployments on one Redis apart.
 */
import { afterAll, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { redisRateLimiter } from "../../core/limiter/redis.js";
import { redisPubSub } from "../../core/pubsub/redis.js";
import type { PubSub } from "../../core/ports/pubsub.js";
import type { RateLimiter } from "../../core/ports/rate-limiter.js";
import { describeWith, eventually, sleep } from "./services.js";

const closers: { close(): Promise<void> }[] = [];
const track = <T extends { close(): Promise<void> }>(x: T): T => { closers.push(x); return x; };
afterAll(async () => { await Promise.allSettled(closers.map((c) => c.close())); });

describeWith(["REDIS_URL"], "redis rate limiter", () => {
  it("shares one budget across limiter instances: 200 per minute in total", async () => {
    const url = process.env.REDIS_URL!;
    const a: RateLimiter = track(redisRateLimiter(url, 200));
    const b: RateLimiter = track(redisRateLimiter(url, 200));
    const key = `key-${randomUUID()}`;
    const decisions = await Promise.all(Array.from({ length: 300 }, (_, i) => (i % 2 ? a : b).consume(key)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(200);
    const denied = decisions.filter((d) => !d.allowed);
    expect(denied).toHaveLength(100);
    for (const d of denied) {
      expect(d.remaining).toBe(0);
      expect(d.limit).toBe(200);
      expect(d.resetMs).toBeGreaterThan(0);
      expect(d.resetMs).toBeLessThanOrEqual(60_000);
    }
    // Another key has its own budget.
    expect((await a.consume(`key-${randomUUID()}`)).allowed).toBe(true);
  });

  it("keeps each deployment's budgets apart by REDIS_PREFIX, on the same Redis", async () => {
    const url = process.env.REDIS_URL!;
    const [one, two] = [`t${randomUUID().slice(0, 8)}`, `t${randomUUID().slice(0, 8)}`];
    const a = track(redisRateLimiter(url, 5, one));
    const alsoA = track(redisRateLimiter(url, 5, one));
    const b = track(redisRateLimiter(url, 5, two));
    const key = "user:1"; // the same id in both deployments
    for (let i = 0; i < 5; i++) expect((await (i % 2 ? a : alsoA).consume(key)).allowed).toBe(true);
    expect((await alsoA.consume(key)).allowed).toBe(false);
    expect((await b.consume(key)).allowed).toBe(true);
    const budgetA = a.budget("bad-key-ip", 2, 60);
    const budgetB = b.budget("bad-key-ip", 2, 60);
    expect([(await budgetA.consume("127.0.0.1")).allowed, (await budgetA.consume("127.0.0.1")).allowed, (await budgetA.consume("127.0.0.1")).allowed]).toEqual([true, true, false]);
    expect((await budgetB.consume("127.0.0.1")).allowed).toBe(true);
  });

  it("keeps a named budget's count across budget() calls and processes, whatever cap it is asked with", async () => {
    const url = process.env.REDIS_URL!;
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const a = track(redisRateLimiter(url, 5, prefix));
    const b = track(redisRateLimiter(url, 5, prefix));
    const allowed: boolean[] = [];
    for (let i = 0; i < 4; i++) allowed.push((await (i % 2 ? a : b).budget("evaluation.calls", 3, 60).consume("project:1")).allowed);
    expect(allowed).toEqual([true, true, true, false]);
    // A raised cap gives the difference (what was refused is not counted), not a new count.
    const raised = [];
    for (let i = 0; i < 3; i++) raised.push(await (i % 2 ? a : b).budget("evaluation.calls", 5, 60).consume("project:1"));
    expect(raised.map((d) => d.allowed)).toEqual([true, true, false]);
  });

  it("keeps limiting, in memory, without waiting when Redis cannot be reached", async () => {
    const down = track(redisRateLimiter("redis://127.0.0.1:1", 5));
    const key = `key-${randomUUID()}`;
    const started = Date.now();
    const decisions = [];
    for (let i = 0; i < 7; i++) decisions.push(await down.consume(key));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false, false]);
  });
});

describeWith(["REDIS_URL"], "redis pub/sub", () => {
  it("delivers across connections to prefix subscribers, and stops after unsubscribe", async () => {
    const url = process.env.REDIS_URL!;
    const pub: PubSub = track(redisPubSub(url));
    const subA: PubSub = track(redisPubSub(url));
    const subB: PubSub = track(redisPubSub(url));
    const ns = `t${randomUUID().slice(0, 8)}.user.`;
    const gotA: [string, string][] = [];
    const gotB: [string, string][] = [];
    const unA = await subA.subscribePrefix(ns, (c, m) => gotA.push([c, m]));
    await subB.subscribePrefix(ns, (c, m) => gotB.push([c, m]));
    await pub.publish(`${ns}42`, JSON.stringify({ type: "event", n: 1 }));
    await pub.publish(`other.${ns}42`, "not for us");
    await pub.publish(`${ns}7`, "second");
    await eventually("both subscribers got both", () => gotA.length === 2 && gotB.length === 2, 5_000);
    expect(gotA).toEqual([[`${ns}42`, JSON.stringify({ type: "event", n: 1 })], [`${ns}7`, "second"]]);
    expect(gotB).toEqual(gotA);
    await unA();
    await pub.publish(`${ns}42`, "third");
    await eventually("B got the third", () => gotB.length === 3, 5_000);
    await sleep(100);
    expect(gotA).toHaveLength(2);
  });

  it("keeps each deployment's channels apart by REDIS_PREFIX, even on other Redis database numbers", async () => {
    const url = process.env.REDIS_URL!;
    const [one, two] = [`t${randomUUID().slice(0, 8)}`, `t${randomUUID().slice(0, 8)}`];
    const other = new URL(url);
    other.pathname = "/3"; // a database number does not separate pub/sub channels: only the prefix does
    const pubOne = track(redisPubSub(url, one));
    const subOne = track(redisPubSub(other.toString(), one));
    const subTwo = track(redisPubSub(url, two));
    const gotOne: [string, string][] = [];
    const gotTwo: [string, string][] = [];
    await subOne.subscribePrefix("project.", (c, m) => gotOne.push([c, m]));
    await subTwo.subscribePrefix("project.", (c, m) => gotTwo.push([c, m]));
    await pubOne.publish("project.1", "run of deployment one");
    await eventually("deployment one's gateway got it", () => gotOne.length === 1, 5_000);
    expect(gotOne).toEqual([["project.1", "run of deployment one"]]);
    await sleep(200);
    expect(gotTwo).toEqual([]);
  });

  it("publish does not throw or hang when Redis is unreachable (best-effort delivery)", async () => {
    const down = track(redisPubSub("redis://127.0.0.1:1"));
    const started = Date.now();
    await expect(down.publish("user.1", "x")).resolves.toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

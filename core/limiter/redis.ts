/**
 * RateLimiter on Redis (rate-limiter-flexible's RateLimiterRedis over ioredis): the per-key budget is shared
 * by every ingest process, so a key gets `pointsPerMinute` in total, not per process.
 *
 * When Redis is down or slow: the limiter does not wait for it (no offline queue, 500 ms command timeout,
 * rejectIfRedisNotReady) and falls back to an insurance in-memory limiter with the same budget per process.
 * Ingest stays available during a Redis outage and keys stay limited, at up to N × the budget with N ingest
 * processes, until Redis is back; then the shared budget applies again (ioredis reconnects on its own).
 * A key already over its budget is blocked in process memory until its window resets, sparing Redis the calls.
 */
import { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis } from "rate-limiter-flexible";
import type { RateDecision, RateLimiter } from "../ports/rate-limiter.js";
import { budgetOver, decisionFrom, namedLimiters, UNCAPPED_POINTS } from "./decision.js";

const FIRST_CONNECT_WAIT_MS = 2_000;

/** `prefix` is the deployment's (REDIS_PREFIX): the keys are `<prefix>:rl:…`. */
export function redisRateLimiter(url: string, pointsPerMinute: number, prefix = "runwatch"): RateLimiter {
  const keyPrefix = `${prefix}:rl`;
  const client = new Redis(url, {
    enableOfflineQueue: false,
    commandTimeout: 500,
    maxRetriesPerRequest: 1,
    connectionName: "runwatch-limiter",
    // Reconnect forever, at most every 2 s.
    retryStrategy: (times) => Math.min(times * 100, 2_000),
  });
  client.on("error", () => {}); // reconnects by itself; the insurance limiter covers the gap
  // The first requests of a fresh process wait (briefly) for the first connection attempt, so they count in the shared budget.
  let connecting: Promise<void> | undefined = new Promise<void>((resolve) => {
    const done = () => { clearTimeout(timer); connecting = undefined; resolve(); };
    const timer = setTimeout(done, FIRST_CONNECT_WAIT_MS);
    client.once("ready", done);
    client.once("error", done); // refused or failed: no point waiting, the insurance limiter answers
  });
  const limiter = new RateLimiterRedis({
    storeClient: client,
    keyPrefix,
    points: pointsPerMinute,
    duration: 60,
    rejectIfRedisNotReady: true,
    inMemoryBlockOnConsumed: pointsPerMinute + 1,
    insuranceLimiter: new RateLimiterMemory({ keyPrefix: `${keyPrefix}:insurance`, points: pointsPerMinute, duration: 60 }),
  });
  // A named budget's keys are `<prefix>:rl:<name>:<key>`, whatever cap it is asked with (core/limiter/decision.ts).
  const named = namedLimiters((name, duration) => new RateLimiterRedis({
    storeClient: client,
    keyPrefix: `${keyPrefix}:${name}`,
    points: UNCAPPED_POINTS,
    duration,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory({ keyPrefix: `${keyPrefix}:insurance:${name}`, points: UNCAPPED_POINTS, duration }),
  }));
  return {
    async consume(key, points = 1): Promise<RateDecision> {
      if (connecting) await connecting;
      try {
        return decisionFrom(true, pointsPerMinute, await limiter.consume(key, points));
      } catch (res) {
        if (res instanceof Error) throw res;
        return decisionFrom(false, pointsPerMinute, res as never);
      }
    },
    budget: (name, points, durationSec) => {
      const budget = budgetOver(named(name, durationSec), points);
      // As consume: a fresh process's first calls count in the shared budget, not in its insurance limiter.
      const ready = async () => { if (connecting) await connecting; };
      return {
        consume: async (key, n) => (await ready(), budget.consume(key, n)),
        peek: async (key) => (await ready(), budget.peek(key)),
        reset: async (key) => (await ready(), budget.reset(key)),
      };
    },
    async close() {
      client.disconnect();
    },
  };
}

import { RateLimiterMemory } from "rate-limiter-flexible";
import type { RateDecision, RateLimiter } from "../ports/rate-limiter.js";
import { budgetOver, decisionFrom, namedLimiters, UNCAPPED_POINTS } from "./decision.js";

export function memoryRateLimiter(pointsPerMinute: number): RateLimiter {
  const limiter = new RateLimiterMemory({ points: pointsPerMinute, duration: 60 });
  const named = namedLimiters((name, duration) => new RateLimiterMemory({ keyPrefix: name, points: UNCAPPED_POINTS, duration }));
  return {
    async consume(key, points = 1): Promise<RateDecision> {
      try {
        return decisionFrom(true, pointsPerMinute, await limiter.consume(key, points));
      } catch (res) {
        if (res instanceof Error) throw res;
        return decisionFrom(false, pointsPerMinute, res as never);
      }
    },
    budget: (name, points, durationSec) => budgetOver(named(name, durationSec), points),
    async close() {},
  };
}

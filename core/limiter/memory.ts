import { RateLimiterMemory } from "rate-limiter-flexible";
import type { RateDecision, RateLimiter } from "../ports/rate-limiter.js";
import { budgetOver, decisionFrom } from "./decision.js";

export function memoryRateLimiter(pointsPerMinute: number): RateLimiter {
  const limiter = new RateLimiterMemory({ points: pointsPerMinute, duration: 60 });
  return {
    async consume(key, points = 1): Promise<RateDecision> {
      try {
        return decisionFrom(true, pointsPerMinute, await limiter.consume(key, points));
      } catch (res) {
        if (res instanceof Error) throw res;
        return decisionFrom(false, pointsPerMinute, res as never);
      }
    },
    budget: (name, points, durationSec) => budgetOver(new RateLimiterMemory({ keyPrefix: name, points, duration: durationSec }), points),
    async close() {},
  };
}

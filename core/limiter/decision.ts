import type { RateLimiterAbstract, RateLimiterRes } from "rate-limiter-flexible";
import type { Budget, RateDecision } from "../ports/rate-limiter.js";

/** rate-limiter-flexible resolves with a RateLimiterRes when allowed and rejects with one when not. */
export const decisionFrom = (allowed: boolean, limit: number, res: RateLimiterRes): RateDecision => ({
  allowed,
  limit,
  remaining: Math.max(0, res.remainingPoints),
  resetMs: res.msBeforeNext,
});

/** A Budget over one rate-limiter-flexible limiter (memory or Redis: they share this API). */
export function budgetOver(limiter: RateLimiterAbstract, points: number): Budget {
  return {
    async consume(key, n = 1) {
      try {
        return decisionFrom(true, points, await limiter.consume(key, n));
      } catch (res) {
        if (res instanceof Error) throw res;
        return decisionFrom(false, points, res as RateLimiterRes);
      }
    },
    async peek(key) {
      const res = await limiter.get(key);
      if (!res) return { allowed: true, limit: points, remaining: points, resetMs: 0 };
      return { allowed: res.consumedPoints < points, limit: points, remaining: Math.max(0, points - res.consumedPoints), resetMs: res.msBeforeNext };
    },
    async reset(key) {
      await limiter.delete(key);
    },
  };
}

import type { RateLimiterAbstract, RateLimiterRes } from "rate-limiter-flexible";
import type { Budget, RateDecision } from "../ports/rate-limiter.js";

/** rate-limiter-flexible resolves with a RateLimiterRes when allowed and rejects with one when not. */
export const decisionFrom = (allowed: boolean, limit: number, res: RateLimiterRes): RateDecision => ({
  allowed,
  limit,
  remaining: Math.max(0, res.remainingPoints),
  resetMs: res.msBeforeNext,
});

/**
 * The points a named budget's limiter is made with: as far as rate-limiter-flexible knows, no cap. It only counts
 * what a key consumed in its window; the cap is the caller's and compared here, per call. So one count serves
 * every cap the budget is asked with: a project that changes its cap keeps what it consumed (a cap in the
 * limiter, or in its key, would start a new count at 0).
 */
export const UNCAPPED_POINTS = Number.MAX_SAFE_INTEGER;

const capped = (points: number, consumed: number, resetMs: number): RateDecision => ({
  allowed: consumed <= points,
  limit: points,
  remaining: Math.max(0, points - consumed),
  resetMs,
});

/**
 * A Budget of `points` over one named budget's limiter (memory or Redis: they share this API), made with
 * UNCAPPED_POINTS and kept by the adapter for the life of the process. A refused consume is given back, so the count
 * is of what was allowed: a cap raised within the window allows the difference. The window is fixed: it ends when
 * it ends, whatever was refused in it.
 */
export function budgetOver(limiter: RateLimiterAbstract, points: number): Budget {
  return {
    async consume(key, n = 1) {
      let res: RateLimiterRes;
      try {
        res = await limiter.consume(key, n);
      } catch (rejected) {
        if (rejected instanceof Error) throw rejected;
        res = rejected as RateLimiterRes;
      }
      if (res.consumedPoints <= points) return capped(points, res.consumedPoints, res.msBeforeNext);
      await limiter.reward(key, n);
      return { allowed: false, limit: points, remaining: 0, resetMs: res.msBeforeNext };
    },
    async peek(key) {
      const res = await limiter.get(key);
      if (!res) return { allowed: true, limit: points, remaining: points, resetMs: 0 };
      return { ...capped(points, res.consumedPoints, res.msBeforeNext), allowed: res.consumedPoints < points };
    },
    async reset(key) {
      await limiter.delete(key);
    },
  };
}

/** One limiter per budget name (and window), made on first use and kept: a budget's counts outlive each budget() call. */
export function namedLimiters(make: (name: string, durationSec: number) => RateLimiterAbstract): (name: string, durationSec: number) => RateLimiterAbstract {
  const limiters = new Map<string, RateLimiterAbstract>();
  return (name, durationSec) => {
    const id = `${name}\u0000${durationSec}`;
    let limiter = limiters.get(id);
    if (!limiter) limiters.set(id, (limiter = make(name, durationSec)));
    return limiter;
  };
}

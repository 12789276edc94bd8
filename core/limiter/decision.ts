import type { RateLimiterRes } from "rate-limiter-flexible";
import type { RateDecision } from "../ports/rate-limiter.js";

/** rate-limiter-flexible resolves with a RateLimiterRes when allowed and rejects with one when not. */
export const decisionFrom = (allowed: boolean, limit: number, res: RateLimiterRes): RateDecision => ({
  allowed,
  limit,
  remaining: Math.max(0, res.remainingPoints),
  resetMs: res.msBeforeNext,
});

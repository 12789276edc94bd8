/**
 * Budgets that protect accounts and the operator's outbound resources (docs/SECURITY.md), on the rate-limiter
 * port: process memory embedded, Redis (shared by every web process) in scale mode.
 *
 *   login attempts per IP           60 / 15 min    every POST /login
 *   failed logins per account       10 / 15 min    reset by a successful login
 *   registrations per IP            20 / hour      every POST /register
 *   failed API-key lookups per IP   30 / minute    a Bearer key that is unknown, expired or revoked
 *   ingest requests per user        RUNWATCH_USER_RATE_LIMIT_PER_MINUTE (5 × the per-key limit), over all keys
 *   events and spans per user       RUNWATCH_EVENT_QUOTA_PER_MINUTE (300,000; 0 = none), over all keys and receivers
 *   test notifications per user     RUNWATCH_TEST_SENDS_PER_HOUR (10)
 *   /improve runs per user          RUNWATCH_IMPROVE_PER_HOUR (20)
 *
 * If the limiter itself fails (Redis down), requests pass: an outage of the limiter must not lock everyone out.
 */
import type { Context } from "koa";
import type { Config } from "../../core/config.js";
import type { Logger } from "../../core/logger.js";
import type { Budget, RateDecision, RateLimiter } from "../../core/ports/rate-limiter.js";
import { rateLimitHeaders } from "../http-errors.js";

export interface Throttles {
  readonly loginPerIp: Budget;
  readonly loginFailuresPerAccount: Budget;
  readonly registrationsPerIp: Budget;
  readonly badKeysPerIp: Budget;
  readonly ingestPerUser: Budget;
  /** Undefined when RUNWATCH_EVENT_QUOTA_PER_MINUTE is 0. */
  readonly eventsPerUser: Budget | undefined;
  readonly testSendsPerUser: Budget;
  readonly improvePerUser: Budget;
}

export function createThrottles(limiter: RateLimiter, config: Config): Throttles {
  return {
    loginPerIp: limiter.budget("login-ip", 60, 15 * 60),
    loginFailuresPerAccount: limiter.budget("login-fail", 10, 15 * 60),
    registrationsPerIp: limiter.budget("register-ip", 20, 60 * 60),
    badKeysPerIp: limiter.budget("bad-key-ip", 30, 60),
    ingestPerUser: limiter.budget("ingest-user", config.userRateLimitPerMinute, 60),
    eventsPerUser: config.eventQuotaPerMinute > 0 ? limiter.budget("events-user", config.eventQuotaPerMinute, 60) : undefined,
    testSendsPerUser: limiter.budget("test-send", config.testSendsPerHour, 60 * 60),
    improvePerUser: limiter.budget("improve", config.improvePerHour, 60 * 60),
  };
}

/** What check() answers when the limiter itself failed: allowed, with nothing to report in headers. */
export const LIMITER_DOWN: RateDecision = Object.freeze({ allowed: true, limit: 0, remaining: 0, resetMs: 0 });
let lastFailureLog = 0;

/** Runs a budget call; a failing limiter (Redis down) allows, answering LIMITER_DOWN (logged at most every 10 s). */
export async function check(call: () => Promise<RateDecision>, logger: Logger): Promise<RateDecision> {
  try {
    return await call();
  } catch (err) {
    if (Date.now() - lastFailureLog > 10_000) {
      lastFailureLog = Date.now();
      logger.error("rate limiter unavailable; requests are not limited", { err });
    }
    return LIMITER_DOWN;
  }
}

/** Sets Retry-After (and RateLimit-*) for a refused decision; the seconds to wait. */
export function refuse(ctx: Context, d: RateDecision): number {
  const h = rateLimitHeaders(d.limit, d.remaining, d.resetMs);
  for (const k in h) ctx.set(k, h[k]!);
  const seconds = Math.max(1, Math.ceil(d.resetMs / 1000));
  ctx.set("Retry-After", String(seconds));
  return seconds;
}

/** "3 minutes" / "40 seconds", for a person reading a refusal. */
export const waitText = (seconds: number): string =>
  seconds >= 120 ? `${Math.ceil(seconds / 60)} minutes` : `${seconds} second${seconds === 1 ? "" : "s"}`;

import type { Context } from "koa";
import { RateLimited } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { Budget, RateLimiter } from "../../core/ports/rate-limiter.js";
import { rateLimitHeaders } from "../http-errors.js";

let lastFailureLog = 0;

/**
 * Takes one token for `bucket`; sets RateLimit-* headers on the response, throws RateLimited (429) when the
 * budget is spent. If the limiter itself fails (Redis down) the request is let through and the failure
 * logged: losing the limit briefly is better than refusing every agent's events.
 */
export async function enforceRateLimit(
  ctx: Context,
  limiter: Pick<RateLimiter | Budget, "consume">,
  bucket: string,
  logger: Logger,
  opts: { headers?: boolean } = {},
): Promise<void> {
  let d;
  try {
    d = await limiter.consume(bucket, 1);
  } catch (err) {
    const now = Date.now();
    if (now - lastFailureLog > 10_000) {
      lastFailureLog = now;
      logger.error("rate limiter unavailable; requests are not limited", { err });
    }
    return;
  }
  if (!d.allowed) throw new RateLimited({ limit: d.limit, remaining: d.remaining, retryAfterMs: d.resetMs });
  if (opts.headers === false) return;
  const h = rateLimitHeaders(d.limit, d.remaining, d.resetMs);
  for (const k in h) ctx.set(k, h[k]!);
}

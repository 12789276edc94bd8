import type { Context } from "koa";
import { RateLimited } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { Budget, RateLimiter } from "../../core/ports/rate-limiter.js";
import { rateLimitHeaders } from "../http-errors.js";
import { check, LIMITER_DOWN } from "./throttles.js";

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
  const d = await check(() => limiter.consume(bucket, 1), logger);
  if (d === LIMITER_DOWN) return;
  if (!d.allowed) throw new RateLimited({ limit: d.limit, remaining: d.remaining, retryAfterMs: d.resetMs });
  if (opts.headers === false) return;
  const h = rateLimitHeaders(d.limit, d.remaining, d.resetMs);
  for (const k in h) ctx.set(k, h[k]!);
}

/**
 * Failed API-key lookups per client IP (docs/SECURITY.md): every unknown, expired or revoked key costs a
 * database lookup (unknown keys are cached for 2 s only), so a client that guesses keys is refused with 429 +
 * Retry-After after 30 failures a minute, before any lookup, until its window passes. Valid keys never count.
 */
import { RateLimited } from "../../core/errors.js";
import { ExpiringSet } from "../../core/expiring-set.js";
import type { Logger } from "../../core/logger.js";
import type { Budget } from "../../core/ports/rate-limiter.js";
import type { ApiKeyAuth } from "./api-key-auth.js";
import { check } from "./throttles.js";

export function throttleKeyFailures(auth: ApiKeyAuth, failuresPerIp: Budget, logger: Logger): ApiKeyAuth {
  // IPs with a failed lookup in the last minute, here: only their requests consult the budget, so a client with a
  // good key pays nothing extra. (In scale mode an IP that failed on another web process is checked here after
  // its first failure here.)
  const suspects = new ExpiringSet();
  return {
    evictKey: (id) => auth.evictKey(id),
    async authenticate(authorization, ip) {
      if (ip === undefined) return auth.authenticate(authorization);
      if (suspects.has(ip)) {
        const d = await check(() => failuresPerIp.peek(ip), logger);
        if (!d.allowed) throw new RateLimited({ limit: d.limit, remaining: 0, retryAfterMs: d.resetMs });
      }
      try {
        return await auth.authenticate(authorization);
      } catch (err) {
        const code = (err as { _tag?: string; code?: string })._tag === "AuthError" ? (err as { code: string }).code : undefined;
        if (code === "invalid_api_key" || code === "expired_api_key") {
          suspects.add(ip, 60_000);
          await check(() => failuresPerIp.consume(ip), logger);
        }
        throw err;
      }
    },
  };
}


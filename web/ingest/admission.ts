/**
 * Who may ingest, and whether now: the Bearer key (401), then one token of the key's rate limit and one of its
 * user's (all keys of a user together: more keys do not buy a bigger budget) → 429. The same for every receiver:
 * POST /api/ingest[/batch], OTLP/HTTP and OTLP/gRPC (which has no Koa context, hence headers as data).
 */
import { RateLimited } from "../../core/errors.js";
import type { WebDeps } from "../deps.js";
import { rateLimitHeaders } from "../http-errors.js";
import type { ApiKeyAuth, KeyPrincipal } from "../middleware/api-key-auth.js";
import { check, LIMITER_DOWN } from "../middleware/throttles.js";

export interface Admitted {
  readonly principal: KeyPrincipal;
  /** RateLimit-* of the key's budget (empty while the limiter is down). */
  readonly headers: Readonly<Record<string, string>>;
}

export type Admission = (authorization: string | undefined, ip: string) => Promise<Admitted>;

export function createAdmission(deps: WebDeps, auth: ApiKeyAuth): Admission {
  const { limiter } = deps.ports;
  const perUser = deps.throttles.ingestPerUser;
  return async (authorization, ip) => {
    const principal = await auth.authenticate(authorization, ip);
    const key = await check(() => limiter.consume(`ingest:${principal.keyId}`, 1), deps.logger);
    if (!key.allowed) throw new RateLimited({ limit: key.limit, remaining: key.remaining, retryAfterMs: key.resetMs });
    // The user's budget only shows when it refuses (429); the headers keep describing the key's.
    const user = await check(() => perUser.consume(String(principal.userId), 1), deps.logger);
    if (!user.allowed) throw new RateLimited({ limit: user.limit, remaining: user.remaining, retryAfterMs: user.resetMs });
    return { principal, headers: key === LIMITER_DOWN ? {} : rateLimitHeaders(key.limit, key.remaining, key.resetMs) };
  };
}

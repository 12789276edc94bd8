/**
 * Who may ingest, and whether now: the Bearer key (401), its creator's role in its project (403 unless it may `send`:
 * a key acts with the role its creator holds now), then one token of the key's rate limit and one of its
 * user's (all keys of a user together: more keys do not buy a bigger budget) → 429. The same for every receiver:
 * POST /api/ingest[/batch], OTLP/HTTP and OTLP/gRPC (which has no Koa context, hence headers as data).
 * Once a receiver has decoded the body it knows how many events (or spans) it holds, and takes them from the user's
 * quota (`take`, RUNWATCH_EVENT_QUOTA_PER_MINUTE) before appending: a request counts once, its events count each.
 */
import { RateLimited } from "../../core/errors.js";
import type { WebDeps } from "../deps.js";
import { rateLimitHeaders } from "../http-errors.js";
import type { ApiKeyAuth, KeyPrincipal } from "../middleware/api-key-auth.js";
import { check, LIMITER_DOWN } from "../middleware/throttles.js";
import { refuseUnlessRoleMay } from "../middleware/key-role.js";

export interface Admitted {
  readonly principal: KeyPrincipal;
  /** RateLimit-* of the key's budget (empty while the limiter is down). */
  readonly headers: Readonly<Record<string, string>>;
  /** Takes `events` (events, or an export's spans) from the user's quota; RateLimited (429) when it is spent. */
  take(events: number): Promise<void>;
}

export type Admission = (authorization: string | undefined, ip: string) => Promise<Admitted>;

/** Takes `events` from user `userId`'s quota in events; RateLimited (429) when it is spent. */
export type EventQuota = (userId: number, events: number) => Promise<void>;

export function createEventQuota(deps: WebDeps): EventQuota {
  const quota = deps.throttles.eventsPerUser;
  return async (userId, events) => {
    if (!quota || events <= 0) return;
    const d = await check(() => quota.consume(String(userId), events), deps.logger);
    if (!d.allowed) throw new RateLimited({ limit: d.limit, unit: "events", remaining: Math.max(0, d.remaining), retryAfterMs: d.resetMs });
  };
}

export function createAdmission(deps: WebDeps, auth: ApiKeyAuth): Admission {
  const { limiter } = deps.ports;
  const perUser = deps.throttles.ingestPerUser;
  const quota = createEventQuota(deps);
  return async (authorization, ip) => {
    const principal = await auth.authenticate(authorization, ip);
    refuseUnlessRoleMay(principal, "send");
    const key = await check(() => limiter.consume(`ingest:${principal.keyId}`, 1), deps.logger);
    if (!key.allowed) throw new RateLimited({ limit: key.limit, remaining: key.remaining, retryAfterMs: key.resetMs });
    // The user's budget only shows when it refuses (429); the headers keep describing the key's.
    const user = await check(() => perUser.consume(String(principal.userId), 1), deps.logger);
    if (!user.allowed) throw new RateLimited({ limit: user.limit, remaining: user.remaining, retryAfterMs: user.resetMs });
    const take = (events: number) => quota(principal.userId, events);
    return { principal, headers: key === LIMITER_DOWN ? {} : rateLimitHeaders(key.limit, key.remaining, key.resetMs), take };
  };
}

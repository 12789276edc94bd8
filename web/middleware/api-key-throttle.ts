/**
 * Failed API-key lookups per client address (docs/SECURITY.md). An unknown, expired or revoked key costs a database
 * lookup (unknown keys are remembered for 2 s only); a valid key costs nothing once cached. The budget bounds what
 * unknown keys cost without ever refusing a valid key, since agents behind one NAT, egress or OpenTelemetry
 * Collector share an address with whoever guesses keys there:
 *
 * - an address's first 30 failures a minute are answered 401, as any other;
 * - past that, every key from the address is still checked — a key known valid at once, any other through a lane of
 *   one lookup at a time for that address (so guesses from it hold at most one database lookup), and one that turns
 *   out unknown is answered 429 + Retry-After;
 * - only when more than MAX_WAITING lookups from that address are already waiting is a request refused unchecked.
 */
import { RateLimited } from "../../core/errors.js";
import { ExpiringSet } from "../../core/expiring-set.js";
import type { Logger } from "../../core/logger.js";
import type { Budget, RateDecision } from "../../core/ports/rate-limiter.js";
import type { ApiKeyAuth, KeyPrincipal } from "./api-key-auth.js";
import { check } from "./throttles.js";

/** Lookups from one over-budget address that may wait their turn; more are refused without a lookup. */
export const MAX_WAITING = 64;

const isKeyFailure = (err: unknown): boolean => {
  const e = err as { _tag?: string; code?: string };
  return e._tag === "AuthError" && (e.code === "invalid_api_key" || e.code === "expired_api_key");
};

/** One lookup at a time per address. */
function lanes() {
  const byAddress = new Map<string, { tail: Promise<unknown>; waiting: number }>();
  return async <T>(address: string, run: () => Promise<T>, overflow: () => Error): Promise<T> => {
    let lane = byAddress.get(address);
    if (!lane) byAddress.set(address, (lane = { tail: Promise.resolve(), waiting: 0 }));
    if (lane.waiting >= MAX_WAITING) throw overflow();
    lane.waiting++;
    const turn = lane.tail.then(run, run);
    lane.tail = turn.catch(() => {});
    try {
      return await turn;
    } finally {
      if (--lane.waiting === 0) byAddress.delete(address);
    }
  };
}

export function throttleKeyFailures(auth: ApiKeyAuth, failuresPerIp: Budget, logger: Logger): ApiKeyAuth {
  // Addresses with a failed lookup in the last minute: only their requests consult the budget, so a client with a
  // good key pays nothing extra. (In scale mode an address that failed on another web process is checked here after
  // its first failure here.)
  const suspects = new ExpiringSet();
  const inLane = lanes();
  const refusal = (d: RateDecision) => new RateLimited({ limit: d.limit, remaining: 0, retryAfterMs: d.resetMs });

  const counted = async (authorization: string | undefined, ip: string): Promise<KeyPrincipal> => {
    try {
      return await auth.authenticate(authorization);
    } catch (err) {
      if (isKeyFailure(err)) {
        suspects.add(ip, 60_000);
        await check(() => failuresPerIp.consume(ip), logger);
      }
      throw err;
    }
  };

  return {
    forget: (change) => auth.forget(change),
    cached: (authorization) => auth.cached(authorization),
    async authenticate(authorization, ip) {
      if (ip === undefined) return auth.authenticate(authorization);
      if (!suspects.has(ip)) return counted(authorization, ip);
      const d = await check(() => failuresPerIp.peek(ip), logger);
      if (d.allowed) return counted(authorization, ip);
      const known = auth.cached(authorization);
      if (known) return known;
      try {
        return await inLane(ip, () => auth.authenticate(authorization), () => refusal(d));
      } catch (err) {
        throw isKeyFailure(err) ? refusal(d) : err;
      }
    },
  };
}

/**
 * Bearer API key authentication for the ingest and read APIs.
 *
 * The presented key is hashed (SHA-256) and looked up in api_keys. Lookups are cached for a short TTL so the
 * hot path does not reach Postgres per request; concurrent misses for one key share a single query, and unknown
 * keys are cached briefly too so a misconfigured client cannot hammer the database. Expiry is checked on every
 * request against the cached expires_at. A principal carries its creator's role in the key's project, so a route
 * checks the role without a query: whatever changes what a key may do (a revocation, a member's new role or removal,
 * a deleted project, a disabled user) is forgotten at once in the process that made it, and in the others when its
 * announcement arrives (accounts/access-changes.ts; at the latest when the TTL ends).
 */
import { AuthError, Unavailable } from "../../core/errors.js";
import { hashApiKey, isApiKeyShape } from "../../core/ids.js";
import type { Logger } from "../../core/logger.js";
import type { Sql } from "../../core/ports/sql.js";
import type { AccessChange } from "../../accounts/index.js";
import { findActiveKeyByHash, touchKey, type KeyPrincipal } from "../../stores/accounts/api-keys.js";

export type { KeyPrincipal };

export interface ApiKeyAuthOptions {
  /** How long a found key is trusted without asking Postgres again. */
  readonly ttlMs?: number;
  /** How long an unknown key is remembered as unknown. */
  readonly negativeTtlMs?: number;
  /** last_used_at is written at most this often per key. */
  readonly touchIntervalMs?: number;
  readonly maxEntries?: number;
}

export interface ApiKeyAuth {
  /**
   * Resolves the principal for an Authorization header, or rejects with AuthError. With the client's `ip`, a
   * throttled authenticator (web/middleware/api-key-throttle.ts) counts failed lookups per IP.
   */
  authenticate(authorization: string | undefined, ip?: string): Promise<KeyPrincipal>;
  /** The principal when the key is known valid without asking the database; undefined when a lookup is needed. */
  cached(authorization: string | undefined): KeyPrincipal | undefined;
  /** Forgets the keys a change covers, so that their next request reads them again (and any lookup under way is not kept). */
  forget(change: AccessChange): void;
}

/** Whether a cached principal is among the keys `change` covers. */
const covers = (change: AccessChange, p: KeyPrincipal): boolean =>
  "member" in change ? p.userId === change.member.userId && p.projectId === change.member.projectId
  : "projectId" in change ? p.projectId === change.projectId
  : "userId" in change ? p.userId === change.userId
  : p.keyId === change.keyId;

interface Entry {
  readonly principal: KeyPrincipal | null;
  readonly until: number;
}

const missing = () => new AuthError({ code: "missing_api_key", message: "missing API key: send Authorization: Bearer <key>" });
const invalid = (why: string) => new AuthError({ code: "invalid_api_key", message: why });

export function createApiKeyAuth(sql: Sql, logger: Logger, opts: ApiKeyAuthOptions = {}): ApiKeyAuth {
  const ttlMs = opts.ttlMs ?? 10_000;
  const negativeTtlMs = opts.negativeTtlMs ?? 2_000;
  const touchIntervalMs = opts.touchIntervalMs ?? 60_000;
  const maxEntries = opts.maxEntries ?? 10_000;
  const cache = new Map<string, Entry>();
  const inflight = new Map<string, Promise<KeyPrincipal | null>>();
  const lastTouch = new Map<number, number>();

  // Bumped by every forget(): a lookup that began before a change may have read the old row, so its answer serves
  // the requests that waited for it but is not cached.
  let generation = 0;

  const lookup = (hash: string): Promise<KeyPrincipal | null> => {
    let p = inflight.get(hash);
    if (p) return p;
    const began = generation;
    p = findActiveKeyByHash(sql, hash)
      .catch((err: unknown) => {
        // The database is down or overloaded: a retryable 503 for the client, not a 500.
        logger.error("api key lookup failed", { err });
        throw new Unavailable({ service: "metadata store", message: "cannot check the API key right now", cause: err });
      })
      .then((principal) => {
        if (began !== generation) return principal;
        if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
        cache.set(hash, { principal, until: Date.now() + (principal ? ttlMs : negativeTtlMs) });
        return principal;
      })
      .finally(() => {
        if (inflight.get(hash) === p) inflight.delete(hash);
      });
    inflight.set(hash, p);
    return p;
  };

  const touch = (principal: KeyPrincipal, now: number) => {
    const last = lastTouch.get(principal.keyId);
    if (last !== undefined && now - last < touchIntervalMs) return;
    lastTouch.set(principal.keyId, now);
    touchKey(sql, principal.keyId).catch((err) => logger.warn("could not update api key last_used_at", { key_id: principal.keyId, err }));
  };

  const check = (principal: KeyPrincipal | null, now: number): KeyPrincipal => {
    if (!principal) throw invalid("invalid API key: unknown or revoked");
    if (principal.expiresAt !== null && principal.expiresAt <= now) {
      throw new AuthError({ code: "expired_api_key", message: `API key expired at ${new Date(principal.expiresAt).toISOString()}` });
    }
    touch(principal, now);
    return principal;
  };

  /** The key's hash from an Authorization header; throws AuthError for a missing or malformed one. */
  const hashOf = (authorization: string | undefined): string => {
    if (!authorization) throw missing();
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (!m) throw invalid("invalid Authorization header: expected 'Bearer <key>'");
    const key = m[1]!.toLowerCase();
    if (!isApiKeyShape(key)) throw invalid("invalid API key: expected 64 hexadecimal characters");
    return hashApiKey(key);
  };

  return {
    cached(authorization) {
      try {
        const now = Date.now();
        const hit = cache.get(hashOf(authorization));
        return hit && hit.until > now && hit.principal ? check(hit.principal, now) : undefined;
      } catch {
        return undefined;
      }
    },
    async authenticate(authorization) {
      const hash = hashOf(authorization);
      const now = Date.now();
      const hit = cache.get(hash);
      if (hit && hit.until > now) return check(hit.principal, now);
      return check(await lookup(hash), Date.now());
    },
    forget(change) {
      generation++;
      inflight.clear(); // the next request looks the key up afresh rather than join a lookup that began before
      for (const [hash, e] of cache) if (e.principal && covers(change, e.principal)) cache.delete(hash);
      if ("keyId" in change) lastTouch.delete(change.keyId);
    },
  };
}

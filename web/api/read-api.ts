/**
 * What every read-API route shares: the Bearer key, then the key's own read rate-limit bucket (apart from the
 * ingest budget, so polling a run never eats into it), and the query-string parameters, each refused with a 422
 * naming it.
 */
import type { Context } from "koa";
import { can, keyMay, type Action } from "../../core/access/roles.js";
import { AuthError, ValidationError } from "../../core/errors.js";
import { isStorableTime } from "../../core/events/schema.js";
import { roleIn } from "../../stores/accounts/projects.js";
import type { WebDeps } from "../deps.js";
import type { ApiKeyAuth, KeyPrincipal } from "../middleware/api-key-auth.js";
import { enforceRateLimit } from "../middleware/rate-limit.js";

/**
 * The guard of the read API's routes: resolves to the key's principal, or throws (401; 403 `insufficient_scope` for
 * a key that may only send, where the route reads; 429). `use: "ingest"` marks the routes an ingest-only key may
 * call too (giving a score; an agent waiting for the answer to its own question).
 */
export function readAuthorizer(deps: WebDeps, auth: ApiKeyAuth, use: "read" | "ingest" = "read"): (ctx: Context) => Promise<KeyPrincipal> {
  return async (ctx) => {
    const p = await auth.authenticate(ctx.req.headers.authorization, ctx.ip);
    if (!keyMay(p.scope, use)) {
      throw new AuthError({ code: "insufficient_scope", message: "this API key may only send (scope ingest): reading needs a key with scope read+ingest" });
    }
    await enforceRateLimit(ctx, deps.ports.limiter, `read:${p.keyId}`, deps.logger);
    return p;
  };
}

/**
 * The guard of a route whose action the key's owner must be allowed in the key's project (their role there, read per
 * request: a demoted member's key loses it at once); 403 `forbidden` with `refusal` otherwise.
 */
export function actingAuthorizer(deps: WebDeps, auth: ApiKeyAuth, action: Action, refusal: string): (ctx: Context) => Promise<KeyPrincipal> {
  const authorize = readAuthorizer(deps, auth);
  return async (ctx) => {
    const p = await authorize(ctx);
    const role = await roleIn(deps.ports.sql, p.projectId, p.userId);
    if (!role || !can(role, action)) throw new AuthError({ code: "forbidden", message: refusal });
    return p;
  };
}

/** A query parameter given at most once; undefined when absent or empty. */
export function stringParam(ctx: Context, name: string): string | undefined {
  const raw = ctx.query[name];
  if (raw === undefined || raw === "") return undefined;
  if (typeof raw !== "string") throw new ValidationError({ message: `${name} may be given once`, field: name });
  return raw;
}

export function intParam(ctx: Context, name: string, min: number, max: number): number | undefined {
  const raw = ctx.query[name];
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (typeof raw !== "string" || !Number.isInteger(n) || n < min || n > max) {
    throw new ValidationError({ message: `${name} must be an integer from ${min} to ${max}`, field: name });
  }
  return n;
}

export function numberParam(ctx: Context, name: string): number | undefined {
  const raw = stringParam(ctx, name);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new ValidationError({ message: `${name} must be a number`, field: name });
  return n;
}

/** An ISO 8601 `since` parameter, normalised to UTC ISO. */
export function sinceParam(ctx: Context): string | undefined {
  const since = stringParam(ctx, "since");
  if (since !== undefined && !isStorableTime(Date.parse(since))) {
    throw new ValidationError({ message: "since must be an ISO 8601 timestamp between 1970-01-01 and 2200-12-31, e.g. 2026-11-23T00:00:00Z", field: "since" });
  }
  return since === undefined ? undefined : new Date(since).toISOString();
}

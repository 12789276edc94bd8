/**
 * What every API route shares: the Bearer key, the role of the key's creator in its project, then the key's own
 * read rate-limit bucket (apart from the ingest budget, so polling a run never eats into it), and the query-string
 * parameters, each refused with a 422 naming it.
 */
import type { Context, Middleware, Next } from "koa";
import { keyMay, type Action } from "../../core/access/roles.js";
import { AuthError, ValidationError } from "../../core/errors.js";
import { isStorableTime } from "../../core/events/schema.js";
import type { WebDeps } from "../deps.js";
import { namesAction } from "../auth/project.js";
import type { ApiKeyAuth, KeyPrincipal } from "../middleware/api-key-auth.js";
import { refuseUnlessRoleMay } from "../middleware/key-role.js";
import { enforceRateLimit } from "../middleware/rate-limit.js";

/** An API route's guard; its handler reads the principal it let through with keyPrincipalOf. */
export interface KeyAuthorizer {
  /**
   * The route's guard, naming its action in the app's route table (web/app.ts): resolves the key (401), refuses a
   * key that may only send where the route reads (403 `insufficient_scope`) and a key whose creator's current role in
   * its project lacks `action` (403 `forbidden`), then takes a token of the key's read budget (429).
   */
  may(action: Action): Middleware;
}

/**
 * The authorizer of a group of API routes. `use: "ingest"` marks the routes an ingest-only key may call too (giving a
 * score; an agent waiting for the answer to its own question). A key acts with its creator's role as it is now
 * (the principal's role: web/middleware/api-key-auth.ts forgets a key whose creator's role changed).
 */
export function readAuthorizer(deps: WebDeps, auth: ApiKeyAuth, use: "read" | "ingest" = "read"): KeyAuthorizer {
  const may = (action: Action): Middleware => namesAction(async (ctx: Context, next: Next) => {
    const p = await auth.authenticate(ctx.req.headers.authorization, ctx.ip);
    if (!keyMay(p.scope, use)) {
      throw new AuthError({ code: "insufficient_scope", message: "this API key may only send (scope ingest): reading needs a key with scope read+ingest" });
    }
    refuseUnlessRoleMay(p, action);
    await enforceRateLimit(ctx, deps.ports.limiter, `read:${p.keyId}`, deps.logger);
    ctx.state.keyPrincipal = p;
    await next();
  }, action, "key");
  return { may };
}

/**
 * The principal the route's guard (`authorize.may`) let through, for a handler of its own (`(ctx) => handler(ctx,
 * deps)`); a route without a guard is a bug, answered 500.
 */
export function keyPrincipalOf(ctx: Context): KeyPrincipal {
  const p = ctx.state.keyPrincipal as KeyPrincipal | undefined;
  if (!p) throw new Error(`${ctx.method} ${ctx.path} names no action: register it with authorize.may(action)`);
  return p;
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

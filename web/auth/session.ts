/**
 * Sessions, the logged-in user and CSRF protection for the cookie-authenticated pages.
 *
 * - koa-session with the Postgres store; cookie `runwatch.sid` is httpOnly, SameSite=Lax, signed with the
 *   session secret, and Secure when the public URL is https.
 * - requireUser: sets ctx.state.user (SessionUser); pages redirect to /login, /api paths answer 401 JSON.
 * - CSRF: every unsafe request to a cookie route (every route but the Bearer APIs) must carry the form's token, as the `_csrf`
 *   field or the X-CSRF-Token header. A logged-in user's token lives in the session; before login (the login
 *   and register forms) it lives in a signed httpOnly cookie. Tokens are compared in constant time.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import type Koa from "koa";
import type { Context, Middleware, Next } from "koa";
import createSession from "koa-session";
import type { SessionUser, WebDeps } from "../deps.js";
import { AuthError } from "../../core/errors.js";
import { sendError, HttpProblem } from "../http-errors.js";
import { readForm } from "../forms.js";
import { pgSessionStore } from "../../stores/sessions.js";

export const SESSION_COOKIE = "runwatch.sid";
export const CSRF_COOKIE = "runwatch.csrf";
const SESSION_MAX_AGE_MS = 7 * 86_400_000;

interface SessionData {
  user?: SessionUser;
  csrf?: string;
  /** Binds realtime tokens to this login (core/tokens.ts `sid`); announced on logout so sockets close. */
  rt?: string;
  regenerate?: () => Promise<void>;
}

/** Paths that never use the session (Bearer APIs, static files): they skip the store round trip. */
const SESSIONLESS = /^\/(static\/|api\/ingest(\/|$)|api\/runs(\/|$)|api\/scores(\/|$)|api\/sessions(\/|$)|api\/datasets(\/|$)|api\/experiments(\/|$)|api\/agents\/|api\/evaluator-templates$|api\/evaluators(\/|$)|api\/evaluation-rules(\/|$)|api\/evaluation-settings$|api\/annotation-queues(\/|$)|api\/provider-keys(\/|$)|api\/views(\/|$)|api\/query(\/|$)|api\/queries(\/|$)|api\/baselines$|api\/slos(\/|$)|api\/prompts(\/|$)|mcp$)/;

const session = (ctx: Context): SessionData | null | undefined =>
  (ctx as unknown as { session?: SessionData | null }).session;

export function sessionMiddleware(app: Koa, deps: WebDeps): Middleware {
  const secure = deps.ports.config.publicWebUrl.startsWith("https:");
  const mw = createSession(
    {
      key: SESSION_COOKIE,
      maxAge: SESSION_MAX_AGE_MS,
      renew: true,
      httpOnly: true,
      signed: true,
      sameSite: "lax",
      secure,
      store: pgSessionStore(deps.ports.sql, deps.logger) as never,
    },
    app,
  );
  return (ctx, next) => (SESSIONLESS.test(ctx.path) ? next() : mw(ctx, next));
}

/** The logged-in user of this request, if any (needs the session middleware). */
export function currentUser(ctx: Context): SessionUser | undefined {
  if (ctx.state.user) return ctx.state.user as SessionUser;
  const s = SESSIONLESS.test(ctx.path) ? undefined : session(ctx);
  return s?.user;
}

const wantsJson = (ctx: Context) => ctx.path.startsWith("/api/") || (ctx.get("Accept").includes("application/json") && !ctx.get("Accept").includes("text/html"));

/** Lets the request through only with a logged-in user, who is then ctx.state.user. */
export const requireUser: Middleware = async (ctx: Context, next: Next) => {
  const user = currentUser(ctx);
  if (!user) {
    if (wantsJson(ctx)) {
      sendError(ctx, new AuthError({ code: "unauthenticated", message: "log in first" }));
    } else {
      const back = ctx.method === "GET" && ctx.originalUrl !== "/" ? `?next=${encodeURIComponent(ctx.originalUrl)}` : "";
      ctx.redirect(`/login${back}`);
    }
    return;
  }
  ctx.state.user = user;
  await next();
};

/** Starts a fresh session for `user` (a new id defeats session fixation) with a new CSRF token. */
export async function logIn(ctx: Context, user: SessionUser): Promise<void> {
  const s = session(ctx)!;
  await s.regenerate?.();
  s.user = { id: user.id, name: user.name, email: user.email };
  s.csrf = newToken();
  s.rt = newToken();
  ctx.state.user = s.user;
}

/** The realtime binding of this login (created for sessions made before it existed). */
export function realtimeSessionId(ctx: Context): string {
  const s = session(ctx)!;
  return (s.rt ??= newToken());
}

/** Ends the session; returns its realtime binding so the caller can close its sockets. */
export function logOut(ctx: Context): string | undefined {
  const rt = session(ctx)?.rt;
  (ctx as unknown as { session: null }).session = null;
  ctx.state.user = undefined;
  return rt;
}

const newToken = () => randomBytes(32).toString("base64url");

/** The CSRF token to put in this request's forms (created on first use). */
export function csrfToken(ctx: Context): string {
  const cached = ctx.state.csrf as string | undefined;
  if (cached) return cached;
  const s = SESSIONLESS.test(ctx.path) ? undefined : session(ctx);
  let token: string;
  if (s?.user) {
    token = s.csrf ??= newToken();
  } else {
    const existing = ctx.cookies.get(CSRF_COOKIE, { signed: true });
    token = existing ?? newToken();
    if (!existing) ctx.cookies.set(CSRF_COOKIE, token, { signed: true, httpOnly: true, sameSite: "lax", secure: ctx.secure, overwrite: true });
  }
  ctx.state.csrf = token;
  return token;
}

function expectedToken(ctx: Context): string | undefined {
  const s = session(ctx);
  return s?.user ? s.csrf : ctx.cookies.get(CSRF_COOKIE, { signed: true });
}

const sameToken = (a: string | undefined, b: string | undefined): boolean => {
  if (!a || !b) return false;
  const x = Buffer.from(a), y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** Rejects unsafe cookie-authenticated requests without the right CSRF token (403). */
export const csrfProtection: Middleware = async (ctx, next) => {
  // Exempt: only the Bearer-authenticated routes, which never read the session cookie. An Authorization header
  // on a cookie route changes nothing: the cookie would still authenticate it.
  if (!UNSAFE.has(ctx.method) || SESSIONLESS.test(ctx.path)) return next();
  const submitted = ctx.get("X-CSRF-Token") || (await readForm(ctx))._csrf;
  if (!sameToken(submitted, expectedToken(ctx))) {
    throw new HttpProblem(403, "csrf_failed", "The form expired or did not come from this site. Reload the page and try again.");
  }
  return next();
};

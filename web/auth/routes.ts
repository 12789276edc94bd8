/**
 * GET/POST /register (registration.ts), GET/POST /login, POST /logout, and GET / (to the dashboard or the login
 * page). Single sign-on has its own routes (oidc.ts).
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { WebDeps } from "../deps.js";
import { readForm } from "../forms.js";
import { render } from "../views.js";
import { checkCredentials, normalizeEmail } from "../../stores/accounts/users.js";
import { check, refuse, waitText } from "../middleware/throttles.js";
import { currentUser, logIn, logOut } from "./session.js";
import { REALTIME_REVOKE_CHANNEL } from "../../core/tokens.js";
import { register, registrationClosed, registrationForm } from "./registration.js";
import { safeNext } from "./safe-next.js";

export function registerAuthRoutes(router: Router, deps: WebDeps): void {
  router.get("/", (ctx) => ctx.redirect(currentUser(ctx) ? "/dashboard" : "/login"));
  router.get("/register", (ctx) => registrationForm(ctx, deps));
  router.post("/register", (ctx) => register(ctx, deps));
  router.get("/login", (ctx) => loginForm(ctx, deps));
  router.post("/login", (ctx) => logInWithPassword(ctx, deps));
  router.post("/logout", (ctx) => logOutEverywhere(ctx, deps));
}

const loginPage = (ctx: Context, deps: WebDeps, values: Record<string, string> = {}, error = "", status = 200) => {
  const { config } = deps.ports;
  render(ctx, "auth/login.njk", {
    title: "Log in", values, error, next: safeNext(values.next ?? ctx.query.next),
    sso: config.oidc ? { label: config.oidc.label } : null, passwords: config.passwordLogin, registration: !registrationClosed(deps),
  }, status);
};

/** GET /login: the form, or on to `next` for a user who is logged in already. */
const loginForm = (ctx: Context, deps: WebDeps): void => (currentUser(ctx) ? ctx.redirect(safeNext(ctx.query.next)) : loginPage(ctx, deps));

/** POST /login: the session, then on to `next`. */
async function logInWithPassword(ctx: Context, deps: WebDeps): Promise<void> {
  const { throttles, logger } = deps;
  if (!deps.ports.config.passwordLogin) return loginPage(ctx, deps, {}, "Passwords are turned off here: sign in with single sign-on.", 403);
  const form = await readForm(ctx);
  const values = { email: form.email ?? "", next: form.next ?? "" };
  if (!values.email.trim() || !form.password) return loginPage(ctx, deps, values, "Enter your email and password.", 422);
  if (values.email.length > 254 || form.password.length > 256) return loginPage(ctx, deps, values, "Wrong email or password.", 401);
  // Per IP (every attempt) and per account (failures): 429 + Retry-After, the same words whether or not the
  // account exists.
  const account = `acct:${normalizeEmail(values.email)}`;
  const byIp = await check(() => throttles.loginPerIp.consume(ctx.ip), logger);
  const byAccount = byIp.allowed ? await check(() => throttles.loginFailuresPerAccount.peek(account), logger) : byIp;
  if (!byAccount.allowed) {
    return loginPage(ctx, deps, values, `Too many attempts. Try again in ${waitText(refuse(ctx, byAccount))}.`, 429);
  }
  const user = await checkCredentials(deps.ports.sql, values.email, form.password);
  if (!user) {
    await check(() => throttles.loginFailuresPerAccount.consume(account), logger);
    return loginPage(ctx, deps, values, "Wrong email or password.", 401);
  }
  await throttles.loginFailuresPerAccount.reset(account).catch((err: unknown) => logger.warn("could not reset failed logins", { err }));
  await logIn(ctx, user);
  ctx.redirect(safeNext(values.next));
}

/** POST /logout: the session ends, and so do its live sockets and realtime tokens. */
async function logOutEverywhere(ctx: Context, deps: WebDeps): Promise<void> {
  const rt = logOut(ctx);
  // Every gateway closes this session's live sockets and refuses its tokens (across processes via pub/sub).
  if (rt) await deps.ports.pubsub.publish(REALTIME_REVOKE_CHANNEL, rt).catch((err: unknown) => deps.logger.warn("could not announce the logout to gateways", { err }));
  ctx.redirect("/login");
}

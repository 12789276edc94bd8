/** GET/POST /register, GET/POST /login, POST /logout, and GET / (to the dashboard or the login page). */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { WebDeps } from "../deps.js";
import { formAction, readForm } from "../forms.js";
import { render } from "../views.js";
import { checkCredentials, createUser, normalizeEmail } from "../../stores/accounts/users.js";
import { invitationOf } from "../../stores/accounts/invitations.js";
import { check, refuse, waitText } from "../middleware/throttles.js";
import { currentUser, logIn, logOut } from "./session.js";
import { REALTIME_REVOKE_CHANNEL } from "../../core/tokens.js";

/** Only same-site relative paths are followed after login (no open redirect). */
export const safeNext = (next: unknown): string =>
  typeof next === "string" && /^\/(?![/\\])/.test(next) ? next : "/dashboard";

interface FieldErrors { [field: string]: string }

const UNUSABLE_EMAIL = "This email cannot be used for a new account. If it is yours, log in instead.";

export function registerAuthRoutes(router: Router, deps: WebDeps): void {
  const { sql, config } = deps.ports;
  const { throttles, logger } = deps;
  const closed = () => config.registration === "closed" || !config.passwordLogin;
  /**
   * With RUNWATCH_REGISTRATION=invite, the open invitation that a registration comes from (its link is the form's
   * `next`); undefined when there is none (then the form is refused).
   */
  const invitationFor = async (next: unknown) => {
    const token = typeof next === "string" ? /^\/invitations\/([0-9a-f]{64})$/.exec(next)?.[1] : undefined;
    return token === undefined ? undefined : invitationOf(sql, token).then((i) => i.invitation, () => undefined);
  };
  const needsInvitation = () => config.registration === "invite";
  const invitationOnlyPage = (ctx: Context) =>
    render(ctx, "error.njk", { title: "Registration needs an invitation", heading: "Registration needs an invitation", message: "This Runwatch server takes new accounts only through an invitation's link. Ask a project's admin to invite you." }, 403);

  router.get("/", (ctx) => ctx.redirect(currentUser(ctx) ? "/dashboard" : "/login"));

  const registerPage = (ctx: Context, values: Record<string, string> = {}, errors: FieldErrors = {}, status = 200) =>
    render(ctx, "auth/register.njk", { title: "Create your account", values, errors, next: values.next || ctx.query.next ? safeNext(values.next || ctx.query.next) : "" }, status);

  const closedPage = (ctx: Context) =>
    render(ctx, "error.njk", { title: "Registration is closed", heading: "Registration is closed", message: "This Runwatch server does not take new accounts. Ask its administrator for one (runwatch user create)." }, 403);

  router.get("/register", async (ctx) => {
    if (currentUser(ctx)) return ctx.redirect("/dashboard");
    if (closed()) return closedPage(ctx);
    if (needsInvitation()) {
      const invitation = await invitationFor(ctx.query.next);
      if (!invitation) return invitationOnlyPage(ctx);
      return registerPage(ctx, { email: invitation.email, next: String(ctx.query.next) });
    }
    return registerPage(ctx);
  });

  router.post("/register", async (ctx) => {
    if (closed()) return closedPage(ctx);
    const form = await readForm(ctx);
    const values = { email: (form.email ?? "").slice(0, 254), name: (form.name ?? "").slice(0, 100), next: form.next ?? "" };
    const quota = await check(() => throttles.registrationsPerIp.consume(ctx.ip), logger);
    if (!quota.allowed) {
      return registerPage(ctx, values, { form: `Too many new accounts from your address. Try again in ${waitText(refuse(ctx, quota))}.` }, 429);
    }
    if (needsInvitation()) {
      const invitation = await invitationFor(values.next);
      if (!invitation) return invitationOnlyPage(ctx);
      if (normalizeEmail(values.email) !== invitation.email) {
        return registerPage(ctx, values, { email: `The invitation is for ${invitation.email}: register with that address.` }, 422);
      }
    }
    if ((form.password ?? "") !== (form.password_confirm ?? form.password ?? "")) {
      return registerPage(ctx, values, { password_confirm: "The passwords do not match." }, 422);
    }
    await formAction({
      refuses: ["ValidationError", "Conflict"],
      run: async () => {
        const user = await createUser(sql, { email: values.email, name: values.name, password: form.password ?? "" });
        await logIn(ctx, user);
        deps.logger.info("user registered", { user_id: user.id });
        // Back where the visitor came from (an invitation's link), else to making a first key.
        ctx.redirect(values.next ? safeNext(values.next) : "/settings/api-keys");
      },
      // A taken email gets the same 422 and wording as any unusable email, so that the form does not confirm
      // that an account exists (docs/SECURITY.md says what remains to a determined prober).
      refused: (r) => r.kind === "Conflict"
        ? registerPage(ctx, values, { email: UNUSABLE_EMAIL }, 422)
        : registerPage(ctx, values, { [r.field]: r.message }, r.status),
    });
  });

  const loginPage = (ctx: Context, values: Record<string, string> = {}, error = "", status = 200) =>
    render(ctx, "auth/login.njk", {
      title: "Log in", values, error, next: safeNext(values.next ?? ctx.query.next),
      sso: config.oidc ? { label: config.oidc.label } : null, passwords: config.passwordLogin, registration: !closed(),
    }, status);

  router.get("/login", (ctx) => (currentUser(ctx) ? ctx.redirect(safeNext(ctx.query.next)) : loginPage(ctx)));

  router.post("/login", async (ctx) => {
    if (!config.passwordLogin) return loginPage(ctx, {}, "Passwords are turned off here: sign in with single sign-on.", 403);
    const form = await readForm(ctx);
    const values = { email: form.email ?? "", next: form.next ?? "" };
    if (!values.email.trim() || !form.password) return loginPage(ctx, values, "Enter your email and password.", 422);
    if (values.email.length > 254 || form.password.length > 256) return loginPage(ctx, values, "Wrong email or password.", 401);
    // Per IP (every attempt) and per account (failures): 429 + Retry-After, the same words whether or not the
    // account exists.
    const account = `acct:${normalizeEmail(values.email)}`;
    const byIp = await check(() => throttles.loginPerIp.consume(ctx.ip), logger);
    const byAccount = byIp.allowed ? await check(() => throttles.loginFailuresPerAccount.peek(account), logger) : byIp;
    if (!byAccount.allowed) {
      return loginPage(ctx, values, `Too many attempts. Try again in ${waitText(refuse(ctx, byAccount))}.`, 429);
    }
    const user = await checkCredentials(sql, values.email, form.password);
    if (!user) {
      await check(() => throttles.loginFailuresPerAccount.consume(account), logger);
      return loginPage(ctx, values, "Wrong email or password.", 401);
    }
    await throttles.loginFailuresPerAccount.reset(account).catch((err: unknown) => logger.warn("could not reset failed logins", { err }));
    await logIn(ctx, user);
    ctx.redirect(safeNext(values.next));
  });

  router.post("/logout", async (ctx) => {
    const rt = logOut(ctx);
    // Every gateway closes this session's live sockets and refuses its tokens (across processes via pub/sub).
    if (rt) await deps.ports.pubsub.publish(REALTIME_REVOKE_CHANNEL, rt).catch((err: unknown) => logger.warn("could not announce the logout to gateways", { err }));
    ctx.redirect("/login");
  });
}

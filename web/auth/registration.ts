/**
 * GET/POST /register: a new account with a password. RUNWATCH_REGISTRATION says who may: anyone (open), only the
 * holder of an invitation's link, for the invited address (invite), or no one (closed, as when passwords are off).
 */
import type { Context } from "koa";
import type { WebDeps } from "../deps.js";
import { formAction, readForm } from "../forms.js";
import { render } from "../views.js";
import { createUser, normalizeEmail } from "../../stores/accounts/users.js";
import { invitationOf } from "../../stores/accounts/invitations.js";
import { check, refuse, waitText } from "../middleware/throttles.js";
import { currentUser, logIn } from "./session.js";
import { safeNext } from "./safe-next.js";

interface FieldErrors { [field: string]: string }

const UNUSABLE_EMAIL = "This email cannot be used for a new account. If it is yours, log in instead.";

/** No new accounts here: registration is closed, or passwords are off. */
export const registrationClosed = (deps: WebDeps): boolean => deps.ports.config.registration === "closed" || !deps.ports.config.passwordLogin;

const needsInvitation = (deps: WebDeps): boolean => deps.ports.config.registration === "invite";

/**
 * With RUNWATCH_REGISTRATION=invite, the open invitation that a registration comes from (its link is the form's
 * `next`); undefined when there is none (then the form is refused).
 */
async function invitationFor(deps: WebDeps, next: unknown) {
  const token = typeof next === "string" ? /^\/invitations\/([0-9a-f]{64})$/.exec(next)?.[1] : undefined;
  return token === undefined ? undefined : invitationOf(deps.ports.sql, token).then((i) => i.invitation, () => undefined);
}

const invitationOnlyPage = (ctx: Context) =>
  render(ctx, "error.njk", { title: "Registration needs an invitation", heading: "Registration needs an invitation", message: "This Runwatch server takes new accounts only through an invitation's link. Ask a project's admin to invite you." }, 403);

const closedPage = (ctx: Context) =>
  render(ctx, "error.njk", { title: "Registration is closed", heading: "Registration is closed", message: "This Runwatch server does not take new accounts. Ask its administrator for one (runwatch user create)." }, 403);

const registerPage = (ctx: Context, values: Record<string, string> = {}, errors: FieldErrors = {}, status = 200) =>
  render(ctx, "auth/register.njk", { title: "Create your account", values, errors, next: values.next || ctx.query.next ? safeNext(values.next || ctx.query.next) : "" }, status);

/** GET /register: the form (with the invited address, when registration needs an invitation). */
export async function registrationForm(ctx: Context, deps: WebDeps): Promise<void> {
  if (currentUser(ctx)) return ctx.redirect("/dashboard");
  if (registrationClosed(deps)) return closedPage(ctx);
  if (needsInvitation(deps)) {
    const invitation = await invitationFor(deps, ctx.query.next);
    if (!invitation) return invitationOnlyPage(ctx);
    return registerPage(ctx, { email: invitation.email, next: String(ctx.query.next) });
  }
  return registerPage(ctx);
}

/** POST /register: the account, logged in; refused per IP past the registration quota (429). */
export async function register(ctx: Context, deps: WebDeps): Promise<void> {
  if (registrationClosed(deps)) return closedPage(ctx);
  const form = await readForm(ctx);
  const values = { email: (form.email ?? "").slice(0, 254), name: (form.name ?? "").slice(0, 100), next: form.next ?? "" };
  const quota = await check(() => deps.throttles.registrationsPerIp.consume(ctx.ip), deps.logger);
  if (!quota.allowed) {
    return registerPage(ctx, values, { form: `Too many new accounts from your address. Try again in ${waitText(refuse(ctx, quota))}.` }, 429);
  }
  if (needsInvitation(deps)) {
    const invitation = await invitationFor(deps, values.next);
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
      const user = await createUser(deps.ports.sql, { email: values.email, name: values.name, password: form.password ?? "" });
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
}

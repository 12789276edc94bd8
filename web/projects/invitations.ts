/**
 * /invitations/{token}: the invitee's side of an invitation. Anyone with the link sees what it is for; accepting needs
 * the invited address's login, and makes the project their current one.
 */
import type { Context } from "koa";
import { acceptInvitation, invitationOf } from "../../stores/accounts/invitations.js";
import { switchProject } from "../../stores/accounts/current-project.js";
import { currentUser } from "../auth/session.js";
import type { SessionUser, WebDeps } from "../deps.js";
import { accessChanged } from "../middleware/access-changed.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { formAction, type Refusal } from "../forms.js";
import { render } from "../views.js";
import { settingsOf } from "./project-settings-page.js";

/** A link that cannot be used (NotFound), or an invitation for another address (AuthError): a page that says so. */
const invitationRefused = (ctx: Context) => (r: Refusal) => {
  const heading = r.kind === "AuthError" ? "Not your invitation" : "Invitation not valid";
  render(ctx, "error.njk", { title: heading, heading, message: r.message }, r.status);
};

/** GET /invitations/:token: the project and role it offers, and how to accept it. */
export async function showInvitation(ctx: Context, deps: WebDeps): Promise<void> {
  const token = ctx.params.token!;
  await formAction({
    refuses: ["NotFound"],
    run: async () => {
      const { invitation, project } = await invitationOf(deps.ports.sql, token);
      render(ctx, "invitation.njk", { title: `Join ${project.name}`, invitation, project, token, user: currentUser(ctx) ?? null, next: encodeURIComponent(ctx.path) });
    },
    refused: invitationRefused(ctx),
  });
}

/** POST /invitations/:token/accept: the logged-in user joins the project, then sees its settings. */
export async function acceptInvite(ctx: Context, deps: WebDeps, apiKeys: ApiKeyAuth): Promise<void> {
  const { sql } = deps.ports;
  const user = ctx.state.user as SessionUser;
  await formAction({
    refuses: ["NotFound", "AuthError"],
    run: async () => {
      const project = await acceptInvitation(sql, ctx.params.token!, user);
      await accessChanged(deps, apiKeys, { member: { userId: user.id, projectId: project.id } }); // a member's role may have changed
      await switchProject(sql, user.id, project.slug);
      deps.logger.info("invitation accepted", { project_id: project.id, user_id: user.id });
      ctx.redirect(settingsOf(project.slug));
    },
    refused: invitationRefused(ctx),
  });
}

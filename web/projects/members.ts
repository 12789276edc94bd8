/**
 * The members part of the project settings page (manage_members): a member's role, their removal, and the
 * invitations the project sends and revokes. A member whose access changes has their API keys act with it from their
 * next request (apiKeys.forget here; other processes are told by the stores).
 */
import type { Context } from "koa";
import type { Role } from "../../core/access/roles.js";
import { NotFound } from "../../core/errors.js";
import { createInvitation, revokeInvitation } from "../../stores/accounts/invitations.js";
import { removeMemberNow, setMemberNow } from "../../accounts/index.js";
import { addressOf } from "../../stores/accounts/email.js";
import { readForm } from "../forms.js";
import { sendInvitation } from "./invitation-mail.js";
import { back, settingsAction, settingsOf, settingsPage, type SettingsForm } from "./project-settings-page.js";

/** "2 API keys (prod, ci)", "1 open invitation (x@example.com)": at most five names. */
const listed = (names: readonly string[], what: string) =>
  `${names.length} ${what}${names.length === 1 ? "" : "s"} (${names.slice(0, 5).join(", ")}${names.length > 5 ? ", …" : ""})`;

/** What a member's removal did besides (the page's message): their keys and invitations in the project, revoked. */
function removalNotice(email: string, keys: readonly string[], invitations: readonly string[]): string {
  const revoked = [keys.length ? `the ${listed(keys, "API key")} they made here` : "", invitations.length ? `the ${listed(invitations, "open invitation")} they sent` : ""];
  return `Removed ${email}.${revoked.some(Boolean) ? ` Revoked ${revoked.filter(Boolean).join(" and ")}.` : ""}`;
}

/** What a new role means for the member's keys and invitations (the page's message). */
function roleNotice(email: string, role: string, keys: number, invitations: readonly string[]): string {
  return `${email} is now ${role}.` +
    (keys ? ` The ${keys === 1 ? "API key they made here acts" : `${keys} API keys they made here act`} as ${role} from now on.` : "") +
    (invitations.length ? ` Revoked the ${listed(invitations, "open invitation")} they sent: a ${role} may not invite.` : "");
}

/** POST /settings/project/:slug/members: adds a member with a role, or gives a member another one. */
export async function setMemberRole(ctx: Context, on: SettingsForm): Promise<void> {
  const { deps, apiKeys, project, user } = on;
  const form = await readForm(ctx);
  await settingsAction(ctx, on, { email: form.email ?? "" }, async () => {
    const set = await setMemberNow(deps.ports.sql, deps.ports.pubsub, project.id, form.email ?? "", (form.role ?? "") as Role, user.id);
    // Their keys act with the new role from their next request here; other processes were told (setMemberNow).
    apiKeys.forget({ member: { userId: set.member.user_id, projectId: project.id } });
    if (set.announceError) deps.logger.warn("could not announce the role change to other web processes", { err: set.announceError });
    back(ctx, project.slug, roleNotice(set.member.email, set.member.role, set.keys, set.invitationsRevoked));
  });
}

/** POST /settings/project/:slug/members/remove: the member, their keys and open invitations in the project go. */
export async function removeMember(ctx: Context, on: SettingsForm): Promise<void> {
  const { deps, apiKeys, project, user } = on;
  const form = await readForm(ctx);
  await settingsAction(ctx, on, {}, async () => {
    const removed = await removeMemberNow(deps.ports.sql, deps.ports.pubsub, project.id, form.email ?? "", user.id);
    apiKeys.forget({ member: { userId: removed.userId, projectId: project.id } });
    deps.logger.info("project member removed", { project_id: project.id, by: user.id, keys_revoked: removed.keysRevoked.length });
    if (removed.announceError) deps.logger.warn("could not announce the removal to gateways", { err: removed.announceError });
    back(ctx, project.slug, removalNotice(addressOf(form.email ?? ""), removed.keysRevoked, removed.invitationsRevoked));
  });
}

/** POST /settings/project/:slug/invitations: mails the link when mail is set up, else shows it to pass on (201). */
export async function inviteMember(ctx: Context, on: SettingsForm): Promise<void> {
  const { deps, project, user } = on;
  const form = await readForm(ctx);
  const values = { email: form.email ?? "", role: form.role ?? "member" };
  await settingsAction(ctx, on, values, async () => {
    const { token, invitation } = await createInvitation(deps.ports.sql, project.id, values.email, values.role, user.id);
    const link = `${deps.ports.config.publicWebUrl.replace(/\/+$/, "")}/invitations/${token}`;
    const mailed = await sendInvitation(deps, { to: invitation.email, project, role: invitation.role, link, invitedBy: user });
    await settingsPage(ctx, deps, project.slug, mailed ? { mailed: invitation.email } : { link }, 201);
  });
}

/** POST /settings/project/:slug/invitations/:id/revoke: the link stops working. */
export async function revokeInvite(ctx: Context, on: SettingsForm): Promise<void> {
  const { deps, project, user } = on;
  const id = Number(ctx.params.id);
  await settingsAction(ctx, on, {}, async () => {
    if (!Number.isSafeInteger(id) || id <= 0) throw new NotFound({ resource: "invitation", message: "no such invitation" });
    await revokeInvitation(deps.ports.sql, project.id, id, user.id);
    ctx.redirect(settingsOf(project.slug));
  });
}

/**
 * /settings/project: a project's name, members and invitations, and its audit log (docs/TEAMS.md); and
 * /invitations/{token}: accepting an invitation. Every action names what it needs in the policy table
 * (core/access/roles.ts), checked against the member's role on each request.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { can, type Action, type Role } from "../../core/access/roles.js";
import { acceptInvitation, createInvitation, invitationOf, pendingInvitations, revokeInvitation } from "../../stores/accounts/invitations.js";
import { auditLog, createProject, membersOf, type Membership } from "../../stores/accounts/projects.js";
import { removeMemberNow } from "../../stores/accounts/member-removal.js";
import { setMemberNow } from "../../stores/accounts/member-role.js";
import { currentProject, rememberProject, switchProject } from "../../stores/accounts/current-project.js";
import { NotFound, ValidationError } from "../../core/errors.js";
import { addressOf } from "../../stores/accounts/email.js";
import { deleteProject, renameProject, transferOwnership } from "../../stores/accounts/project-ownership.js";
import { currentUser, requireUser } from "../auth/session.js";
import { namesAction } from "../auth/project.js";
import { projectPath, projectSlugOf, sectionOf } from "./project-url.js";
import type { SessionUser, WebDeps } from "../deps.js";
import { accessChanged } from "../middleware/access-changed.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { readForm } from "../forms.js";
import { render } from "../views.js";
import { sendInvitation } from "./invitation-mail.js";

/** Where a failed action's message goes on the page. */
type Flash = { flash?: string; errors?: Record<string, string>; values?: Record<string, string>; link?: string; mailed?: string };

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

export function registerProjectRoutes(router: Router, deps: WebDeps, apiKeys: ApiKeyAuth): void {
  const { sql } = deps.ports;
  /** A project's settings page, where every form of this page comes back to. */
  const settingsOf = (slug: string) => projectPath(slug, "/settings/project");
  const back = (ctx: Context, slug: string, flash: string) => ctx.redirect(`${settingsOf(slug)}?flash=${encodeURIComponent(flash)}`);

  /** The user's membership of the project named by the slug (default: their current project); undefined when none. */
  const membershipOf = async (ctx: Context, slug: string | undefined): Promise<{ all: Membership[]; current: Membership | undefined; active: Membership | undefined }> => {
    const user = ctx.state.user as SessionUser;
    const found = await currentProject(sql, user.id);
    const all = found?.all ?? [];
    return { all, current: slug === undefined ? found?.current : all.find((p) => p.slug === slug), active: found?.current };
  };

  // Any user may start a project of their own (they own it), which the dashboard then shows.
  router.post("/projects", requireUser, async (ctx) => {
    const user = ctx.state.user as SessionUser;
    const form = await readForm(ctx);
    try {
      const project = await createProject(sql, user.id, form.name ?? "");
      await switchProject(sql, user.id, project.slug);
      deps.logger.info("project created", { project_id: project.id, by: user.id });
      ctx.status = 303;
      ctx.redirect(settingsOf(project.slug));
    } catch (err) {
      if ((err as { _tag?: string })._tag !== "ValidationError") throw err;
      const message = (err as Error).message;
      await page(ctx, undefined, { errors: { new_name: message }, values: { new_name: form.name ?? "" }, flash: message }, 422);
    }
  });

  // The dashboard's project switcher: what every page shows from now on, remembered for the user.
  router.post("/projects/switch", requireUser, async (ctx) => {
    const user = ctx.state.user as SessionUser;
    const form = await readForm(ctx);
    const project = await switchProject(sql, user.id, form.project ?? "");
    if (!project) throw new NotFound({ resource: "project", message: `you are not a member of a project ${JSON.stringify(form.project ?? "")}` });
    ctx.status = 303;
    ctx.redirect(projectPath(project.slug, sectionOf(form.next)));
  });

  const page = async (ctx: Context, slug: string | undefined, extra: Flash = {}, status = 200) => {
    const { all, current, active } = await membershipOf(ctx, slug);
    // The layout (its links and switcher) is the project's whose page this is.
    ctx.state.project = current ?? active;
    ctx.state.projects = all;
    if (!current) return render(ctx, "error.njk", { title: "No such project", heading: "No such project", message: "You are not a member of this project." }, 404);
    if (current.id !== active?.id && ctx.method === "GET") await rememberProject(sql, (ctx.state.user as SessionUser).id, current.id);
    const may = (action: Action) => can(current.role, action);
    const [members, invitations, log] = await Promise.all([
      membersOf(sql, current.id),
      may("manage_members") ? pendingInvitations(sql, current.id) : Promise.resolve([]),
      may("manage_members") ? auditLog(sql, current.id, 50) : Promise.resolve([]),
    ]);
    ctx.set("Cache-Control", "no-store");
    render(ctx, "project-settings.njk", {
      title: `${current.name}: project settings`,
      projects: all,
      project: current,
      members,
      invitations,
      log,
      mayManageMembers: may("manage_members"),
      isOwner: may("delete_project"),
      assignableRoles: ["viewer", "member", "admin"],
      values: {},
      errors: {},
      ...extra,
    }, status);
  };

  /** Runs `fn` when the user's role in the slug's project allows `action`; a 403 page otherwise. */
  const guarded = (action: Action, fn: (ctx: Context, project: Membership, user: SessionUser) => Promise<void>) => namesAction(async (ctx: Context) => {
    const { current } = await membershipOf(ctx, ctx.params.slug);
    if (!current) return page(ctx, ctx.params.slug);
    if (!can(current.role, action)) {
      return render(ctx, "error.njk", { title: "Not allowed", heading: "Not allowed", message: `Your role in ${current.name} (${current.role}) does not allow this.` }, 403);
    }
    await fn(ctx, current, ctx.state.user as SessionUser);
  }, action);

  /** A store refusal (ValidationError, Conflict, NotFound) as the page with its message; anything else rethrown. */
  const refused = async (ctx: Context, slug: string, err: unknown, values: Record<string, string> = {}) => {
    const e = err as { _tag?: string; field?: string; message: string };
    const status = { ValidationError: 422, Conflict: 409, NotFound: 404 }[e._tag ?? ""];
    if (status === undefined) throw err;
    await page(ctx, slug, { errors: { [e.field ?? "form"]: e.message }, values, flash: e.message }, status);
  };

  // /p/{slug}/settings/project (or ?project={slug}, as earlier links had it).
  router.get("/settings/project", requireUser, namesAction((ctx: Context) =>
    page(ctx, projectSlugOf(ctx) ?? (typeof ctx.query.project === "string" ? ctx.query.project : undefined), typeof ctx.query.flash === "string" ? { flash: ctx.query.flash.slice(0, 2000) } : {}), "read"));

  router.post("/settings/project/:slug/members", requireUser, guarded("manage_members", async (ctx, project, user) => {
    const form = await readForm(ctx);
    try {
      const set = await setMemberNow(sql, deps.ports.pubsub, project.id, form.email ?? "", (form.role ?? "") as Role, user.id);
      // Their keys act with the new role from their next request here; other processes were told (setMemberNow).
      apiKeys.forget({ member: { userId: set.member.user_id, projectId: project.id } });
      if (set.announceError) deps.logger.warn("could not announce the role change to other web processes", { err: set.announceError });
      back(ctx, project.slug, roleNotice(set.member.email, set.member.role, set.keys, set.invitationsRevoked));
    } catch (err) {
      await refused(ctx, project.slug, err, { email: form.email ?? "" });
    }
  }));

  router.post("/settings/project/:slug/members/remove", requireUser, guarded("manage_members", async (ctx, project, user) => {
    const form = await readForm(ctx);
    try {
      const removed = await removeMemberNow(sql, deps.ports.pubsub, project.id, form.email ?? "", user.id);
      apiKeys.forget({ member: { userId: removed.userId, projectId: project.id } });
      deps.logger.info("project member removed", { project_id: project.id, by: user.id, keys_revoked: removed.keysRevoked.length });
      if (removed.announceError) deps.logger.warn("could not announce the removal to gateways", { err: removed.announceError });
      back(ctx, project.slug, removalNotice(addressOf(form.email ?? ""), removed.keysRevoked, removed.invitationsRevoked));
    } catch (err) {
      await refused(ctx, project.slug, err);
    }
  }));

  router.post("/settings/project/:slug/invitations", requireUser, guarded("manage_members", async (ctx, project, user) => {
    const form = await readForm(ctx);
    const values = { email: form.email ?? "", role: form.role ?? "member" };
    try {
      const { token, invitation } = await createInvitation(sql, project.id, values.email, values.role, user.id);
      const link = `${deps.ports.config.publicWebUrl.replace(/\/+$/, "")}/invitations/${token}`;
      const mailed = await sendInvitation(deps, { to: invitation.email, project, role: invitation.role, link, invitedBy: user });
      await page(ctx, project.slug, mailed ? { mailed: invitation.email } : { link }, 201);
    } catch (err) {
      await refused(ctx, project.slug, err, values);
    }
  }));

  router.post("/settings/project/:slug/invitations/:id/revoke", requireUser, guarded("manage_members", async (ctx, project, user) => {
    const id = Number(ctx.params.id);
    try {
      if (!Number.isSafeInteger(id) || id <= 0) throw Object.assign(new Error("no such invitation"), { _tag: "NotFound" });
      await revokeInvitation(sql, project.id, id, user.id);
      ctx.redirect(settingsOf(project.slug));
    } catch (err) {
      await refused(ctx, project.slug, err);
    }
  }));

  // The owner's: rename, transfer, delete (stores/accounts/project-ownership.ts).
  router.post("/settings/project/:slug/rename", requireUser, guarded("rename_project", async (ctx, project, user) => {
    const form = await readForm(ctx);
    try {
      await renameProject(sql, project.id, form.name ?? "", user.id);
      ctx.redirect(settingsOf(project.slug));
    } catch (err) {
      await refused(ctx, project.slug, err, { name: form.name ?? "" });
    }
  }));

  router.post("/settings/project/:slug/transfer", requireUser, guarded("transfer_ownership", async (ctx, project, user) => {
    const form = await readForm(ctx);
    try {
      await transferOwnership(sql, project.id, form.email ?? "", user.id);
      await accessChanged(deps, apiKeys, { projectId: project.id }); // two roles changed: the old owner is an admin now
      deps.logger.info("project ownership transferred", { project_id: project.id, by: user.id });
      ctx.redirect(settingsOf(project.slug));
    } catch (err) {
      await refused(ctx, project.slug, err, { owner_email: form.email ?? "" });
    }
  }));

  router.post("/settings/project/:slug/delete", requireUser, guarded("delete_project", async (ctx, project, user) => {
    const form = await readForm(ctx);
    try {
      if ((form.confirm ?? "").trim() !== project.slug) {
        throw new ValidationError({ message: `type the project's slug (${project.slug}) to delete it`, field: "confirm" });
      }
      await deleteProject({ sql, ch: deps.ports.clickhouse }, project.id);
      await accessChanged(deps, apiKeys, { projectId: project.id }); // its keys went with it
      deps.logger.info("project deleted", { project_id: project.id, slug: project.slug, by: user.id });
      ctx.status = 303;
      ctx.redirect("/settings/project");
    } catch (err) {
      await refused(ctx, project.slug, err);
    }
  }));

  // Accepting: anyone with the link sees what it is for; accepting needs the invited address's login.
  router.get("/invitations/:token", async (ctx) => {
    const token = ctx.params.token!;
    try {
      const { invitation, project } = await invitationOf(sql, token);
      render(ctx, "invitation.njk", { title: `Join ${project.name}`, invitation, project, token, user: currentUser(ctx) ?? null, next: encodeURIComponent(ctx.path) });
    } catch (err) {
      if ((err as { _tag?: string })._tag !== "NotFound") throw err;
      render(ctx, "error.njk", { title: "Invitation not valid", heading: "Invitation not valid", message: (err as Error).message }, 404);
    }
  });

  router.post("/invitations/:token/accept", requireUser, async (ctx) => {
    const user = ctx.state.user as SessionUser;
    try {
      const project = await acceptInvitation(sql, ctx.params.token!, user);
      await accessChanged(deps, apiKeys, { member: { userId: user.id, projectId: project.id } }); // a member's role may have changed
      await switchProject(sql, user.id, project.slug);
      deps.logger.info("invitation accepted", { project_id: project.id, user_id: user.id });
      ctx.redirect(settingsOf(project.slug));
    } catch (err) {
      const e = err as { _tag?: string; message: string };
      if (e._tag === "NotFound") return render(ctx, "error.njk", { title: "Invitation not valid", heading: "Invitation not valid", message: e.message }, 404);
      if (e._tag === "AuthError") return render(ctx, "error.njk", { title: "Not your invitation", heading: "Not your invitation", message: e.message }, 403);
      throw err;
    }
  });
}

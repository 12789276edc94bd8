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
import { removeMemberNow, setMemberNow } from "../../accounts/index.js";
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
import { formAction, readForm, type Refusal } from "../forms.js";
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
    await formAction({
      refuses: ["ValidationError"],
      run: async () => {
        const project = await createProject(sql, user.id, form.name ?? "");
        await switchProject(sql, user.id, project.slug);
        deps.logger.info("project created", { project_id: project.id, by: user.id });
        ctx.status = 303;
        ctx.redirect(settingsOf(project.slug));
      },
      refused: (r) => page(ctx, undefined, { errors: { new_name: r.message }, values: { new_name: form.name ?? "" }, flash: r.message }, r.status),
    });
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

  /** Runs a form of the page; a store refusal (ValidationError, Conflict, NotFound) shows the page with its message. */
  const settingsAction = (ctx: Context, slug: string, values: Record<string, string>, run: () => Promise<void>) => formAction({
    refuses: ["ValidationError", "Conflict", "NotFound"],
    run,
    refused: (r) => page(ctx, slug, { errors: { [r.field]: r.message }, values, flash: r.message }, r.status),
  });

  // /p/{slug}/settings/project (or ?project={slug}, as earlier links had it).
  router.get("/settings/project", requireUser, namesAction((ctx: Context) =>
    page(ctx, projectSlugOf(ctx) ?? (typeof ctx.query.project === "string" ? ctx.query.project : undefined), typeof ctx.query.flash === "string" ? { flash: ctx.query.flash.slice(0, 2000) } : {}), "read"));

  router.post("/settings/project/:slug/members", requireUser, guarded("manage_members", async (ctx, project, user) => {
    const form = await readForm(ctx);
    await settingsAction(ctx, project.slug, { email: form.email ?? "" }, async () => {
      const set = await setMemberNow(sql, deps.ports.pubsub, project.id, form.email ?? "", (form.role ?? "") as Role, user.id);
      // Their keys act with the new role from their next request here; other processes were told (setMemberNow).
      apiKeys.forget({ member: { userId: set.member.user_id, projectId: project.id } });
      if (set.announceError) deps.logger.warn("could not announce the role change to other web processes", { err: set.announceError });
      back(ctx, project.slug, roleNotice(set.member.email, set.member.role, set.keys, set.invitationsRevoked));
    });
  }));

  router.post("/settings/project/:slug/members/remove", requireUser, guarded("manage_members", async (ctx, project, user) => {
    const form = await readForm(ctx);
    await settingsAction(ctx, project.slug, {}, async () => {
      const removed = await removeMemberNow(sql, deps.ports.pubsub, project.id, form.email ?? "", user.id);
      apiKeys.forget({ member: { userId: removed.userId, projectId: project.id } });
      deps.logger.info("project member removed", { project_id: project.id, by: user.id, keys_revoked: removed.keysRevoked.length });
      if (removed.announceError) deps.logger.warn("could not announce the removal to gateways", { err: removed.announceError });
      back(ctx, project.slug, removalNotice(addressOf(form.email ?? ""), removed.keysRevoked, removed.invitationsRevoked));
    });
  }));

  router.post("/settings/project/:slug/invitations", requireUser, guarded("manage_members", async (ctx, project, user) => {
    const form = await readForm(ctx);
    const values = { email: form.email ?? "", role: form.role ?? "member" };
    await settingsAction(ctx, project.slug, values, async () => {
      const { token, invitation } = await createInvitation(sql, project.id, values.email, values.role, user.id);
      const link = `${deps.ports.config.publicWebUrl.replace(/\/+$/, "")}/invitations/${token}`;
      const mailed = await sendInvitation(deps, { to: invitation.email, project, role: invitation.role, link, invitedBy: user });
      await page(ctx, project.slug, mailed ? { mailed: invitation.email } : { link }, 201);
    });
  }));

  router.post("/settings/project/:slug/invitations/:id/revoke", requireUser, guarded("manage_members", async (ctx, project, user) => {
    const id = Number(ctx.params.id);
    await settingsAction(ctx, project.slug, {}, async () => {
      if (!Number.isSafeInteger(id) || id <= 0) throw new NotFound({ resource: "invitation", message: "no such invitation" });
      await revokeInvitation(sql, project.id, id, user.id);
      ctx.redirect(settingsOf(project.slug));
    });
  }));

  // The owner's: rename, transfer, delete (stores/accounts/project-ownership.ts).
  router.post("/settings/project/:slug/rename", requireUser, guarded("rename_project", async (ctx, project, user) => {
    const form = await readForm(ctx);
    await settingsAction(ctx, project.slug, { name: form.name ?? "" }, async () => {
      await renameProject(sql, project.id, form.name ?? "", user.id);
      ctx.redirect(settingsOf(project.slug));
    });
  }));

  router.post("/settings/project/:slug/transfer", requireUser, guarded("transfer_ownership", async (ctx, project, user) => {
    const form = await readForm(ctx);
    await settingsAction(ctx, project.slug, { owner_email: form.email ?? "" }, async () => {
      await transferOwnership(sql, project.id, form.email ?? "", user.id);
      await accessChanged(deps, apiKeys, { projectId: project.id }); // two roles changed: the old owner is an admin now
      deps.logger.info("project ownership transferred", { project_id: project.id, by: user.id });
      ctx.redirect(settingsOf(project.slug));
    });
  }));

  router.post("/settings/project/:slug/delete", requireUser, guarded("delete_project", async (ctx, project, user) => {
    const form = await readForm(ctx);
    await settingsAction(ctx, project.slug, {}, async () => {
      if ((form.confirm ?? "").trim() !== project.slug) {
        throw new ValidationError({ message: `type the project's slug (${project.slug}) to delete it`, field: "confirm" });
      }
      await deleteProject({ sql, ch: deps.ports.clickhouse }, project.id);
      await accessChanged(deps, apiKeys, { projectId: project.id }); // its keys went with it
      deps.logger.info("project deleted", { project_id: project.id, slug: project.slug, by: user.id });
      ctx.status = 303;
      ctx.redirect("/settings/project");
    });
  }));

  /** A link that cannot be used (NotFound), or an invitation for another address (AuthError): a page that says so. */
  const invitationRefused = (ctx: Context) => (r: Refusal) => {
    const heading = r.kind === "AuthError" ? "Not your invitation" : "Invitation not valid";
    render(ctx, "error.njk", { title: heading, heading, message: r.message }, r.status);
  };

  // Accepting: anyone with the link sees what it is for; accepting needs the invited address's login.
  router.get("/invitations/:token", async (ctx) => {
    const token = ctx.params.token!;
    await formAction({
      refuses: ["NotFound"],
      run: async () => {
        const { invitation, project } = await invitationOf(sql, token);
        render(ctx, "invitation.njk", { title: `Join ${project.name}`, invitation, project, token, user: currentUser(ctx) ?? null, next: encodeURIComponent(ctx.path) });
      },
      refused: invitationRefused(ctx),
    });
  });

  router.post("/invitations/:token/accept", requireUser, async (ctx) => {
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
  });
}

/**
 * The projects' routes (docs/TEAMS.md): starting and switching projects; /settings/project, a project's name, members
 * and invitations, and its audit log (settings-page.ts, members.ts); and /invitations/{token}, accepting an
 * invitation (invitations.ts). Every action names what it needs in the policy table (core/access/roles.ts), checked
 * against the member's role on each request. The owner's forms (rename, transfer, delete) are here.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { Action } from "../../core/access/roles.js";
import { createProject } from "../../stores/accounts/projects.js";
import { switchProject } from "../../stores/accounts/current-project.js";
import { NotFound, ValidationError } from "../../core/errors.js";
import { deleteProject, renameProject, transferOwnership } from "../../stores/accounts/project-ownership.js";
import { requireUser } from "../auth/session.js";
import { namesAction } from "../auth/project.js";
import type { SessionUser, WebDeps } from "../deps.js";
import { accessChanged } from "../middleware/access-changed.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { formAction, readForm } from "../forms.js";
import { projectPath, projectSlugOf, sectionOf } from "./project-url.js";
import { guarded, settingsAction, settingsOf, settingsPage, type SettingsForm } from "./project-settings-page.js";
import { inviteMember, removeMember, revokeInvite, setMemberRole } from "./members.js";
import { acceptInvite, showInvitation } from "./invitations.js";

export function registerProjectRoutes(router: Router, deps: WebDeps, apiKeys: ApiKeyAuth): void {
  const may = (action: Action, handler: (ctx: Context, form: SettingsForm) => Promise<void>) => guarded(deps, apiKeys, action, handler);
  // Any user may start a project of their own (they own it), which the dashboard then shows.
  router.post("/projects", requireUser, (ctx) => startProject(ctx, deps));
  // The dashboard's project switcher: what every page shows from now on, remembered for the user.
  router.post("/projects/switch", requireUser, (ctx) => switchToProject(ctx, deps));
  // /p/{slug}/settings/project (or ?project={slug}, as earlier links had it).
  router.get("/settings/project", requireUser, namesAction((ctx: Context) => showSettings(ctx, deps), "read"));
  router.post("/settings/project/:slug/members", requireUser, may("manage_members", setMemberRole));
  router.post("/settings/project/:slug/members/remove", requireUser, may("manage_members", removeMember));
  router.post("/settings/project/:slug/invitations", requireUser, may("manage_members", inviteMember));
  router.post("/settings/project/:slug/invitations/:id/revoke", requireUser, may("manage_members", revokeInvite));
  // The owner's: rename, transfer, delete (stores/accounts/project-ownership.ts).
  router.post("/settings/project/:slug/rename", requireUser, may("rename_project", renameForm));
  router.post("/settings/project/:slug/transfer", requireUser, may("transfer_ownership", transferForm));
  router.post("/settings/project/:slug/delete", requireUser, may("delete_project", deleteForm));
  // Accepting: anyone with the link sees what it is for; accepting needs the invited address's login.
  router.get("/invitations/:token", (ctx) => showInvitation(ctx, deps));
  router.post("/invitations/:token/accept", requireUser, (ctx) => acceptInvite(ctx, deps, apiKeys));
}

/** POST /projects: a new project the user owns, now their current one; a refused name shows the settings page. */
async function startProject(ctx: Context, deps: WebDeps): Promise<void> {
  const { sql } = deps.ports;
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
    refused: (r) => settingsPage(ctx, deps, undefined, { errors: { new_name: r.message }, values: { new_name: form.name ?? "" }, flash: r.message }, r.status),
  });
}

/** POST /projects/switch: to the same section (`next`) of the chosen project. */
async function switchToProject(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  const project = await switchProject(deps.ports.sql, (ctx.state.user as SessionUser).id, form.project ?? "");
  if (!project) throw new NotFound({ resource: "project", message: `you are not a member of a project ${JSON.stringify(form.project ?? "")}` });
  ctx.status = 303;
  ctx.redirect(projectPath(project.slug, sectionOf(form.next)));
}

/** GET /settings/project: the page of the URL's project, with the message a form came back with. */
const showSettings = (ctx: Context, deps: WebDeps): Promise<void> =>
  settingsPage(ctx, deps, projectSlugOf(ctx) ?? (typeof ctx.query.project === "string" ? ctx.query.project : undefined), typeof ctx.query.flash === "string" ? { flash: ctx.query.flash.slice(0, 2000) } : {});

/** A new name for the project (its slug, and so its URLs, stay). */
async function renameForm(ctx: Context, on: SettingsForm): Promise<void> {
  const { deps, project, user } = on;
  const form = await readForm(ctx);
  await settingsAction(ctx, on, { name: form.name ?? "" }, async () => {
    await renameProject(deps.ports.sql, project.id, form.name ?? "", user.id);
    ctx.redirect(settingsOf(project.slug));
  });
}

/** Makes the member with the given address the owner; the old owner stays an admin. */
async function transferForm(ctx: Context, on: SettingsForm): Promise<void> {
  const { deps, apiKeys, project, user } = on;
  const form = await readForm(ctx);
  await settingsAction(ctx, on, { owner_email: form.email ?? "" }, async () => {
    await transferOwnership(deps.ports.sql, project.id, form.email ?? "", user.id);
    await accessChanged(deps, apiKeys, { projectId: project.id }); // two roles changed: the old owner is an admin now
    deps.logger.info("project ownership transferred", { project_id: project.id, by: user.id });
    ctx.redirect(settingsOf(project.slug));
  });
}

/** Deletes the project with its runs and keys, once the owner typed its slug. */
async function deleteForm(ctx: Context, on: SettingsForm): Promise<void> {
  const { deps, apiKeys, project, user } = on;
  const form = await readForm(ctx);
  await settingsAction(ctx, on, {}, async () => {
    if ((form.confirm ?? "").trim() !== project.slug) {
      throw new ValidationError({ message: `type the project's slug (${project.slug}) to delete it`, field: "confirm" });
    }
    await deleteProject({ sql: deps.ports.sql, ch: deps.ports.clickhouse }, project.id);
    await accessChanged(deps, apiKeys, { projectId: project.id }); // its keys went with it
    deps.logger.info("project deleted", { project_id: project.id, slug: project.slug, by: user.id });
    ctx.status = 303;
    ctx.redirect("/settings/project");
  });
}

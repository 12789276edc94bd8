/**
 * The project settings page (/settings/project, docs/TEAMS.md): what it shows to a member, and the way each of its
 * forms comes back to it — a refused form shows the page with its message, a done one redirects to it. Every form
 * names its action in the policy table (core/access/roles.ts), checked against the member's role on each request.
 */
import type { Context } from "koa";
import type { Sql } from "../../core/ports/sql.js";
import { can, type Action } from "../../core/access/roles.js";
import { pendingInvitations } from "../../stores/accounts/invitations.js";
import { auditLog, membersOf, type Membership } from "../../stores/accounts/projects.js";
import { currentProject, rememberProject } from "../../stores/accounts/current-project.js";
import { namesAction } from "../auth/project.js";
import type { SessionUser, WebDeps } from "../deps.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { formAction } from "../forms.js";
import { render } from "../views.js";
import { projectPath } from "./project-url.js";

/** Where a failed action's message goes on the page. */
export type Flash = { flash?: string; errors?: Record<string, string>; values?: Record<string, string>; link?: string; mailed?: string };

/** A project's settings page, where every form of this page comes back to. */
export const settingsOf = (slug: string): string => projectPath(slug, "/settings/project");

/** Back to the project's settings page, with a message. */
export const back = (ctx: Context, slug: string, flash: string): void => ctx.redirect(`${settingsOf(slug)}?flash=${encodeURIComponent(flash)}`);

/** The user's membership of the project named by the slug (default: their current project); undefined when none. */
async function membershipOf(ctx: Context, sql: Sql, slug: string | undefined): Promise<{ all: Membership[]; current: Membership | undefined; active: Membership | undefined }> {
  const user = ctx.state.user as SessionUser;
  const found = await currentProject(sql, user.id);
  const all = found?.all ?? [];
  return { all, current: slug === undefined ? found?.current : all.find((p) => p.slug === slug), active: found?.current };
}

/** The settings page of the slug's project (default: the user's current one); a 404 page when they are not its member. */
export async function settingsPage(ctx: Context, deps: WebDeps, slug: string | undefined, extra: Flash = {}, status = 200): Promise<void> {
  const { sql } = deps.ports;
  const { all, current, active } = await membershipOf(ctx, sql, slug);
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
}

/** What a form of the page acts with: the project the URL names (the user's role there allows the action), the user. */
export interface SettingsForm {
  readonly deps: WebDeps;
  /** Told when a member's access changes, so that their keys act with it from the next request. */
  readonly apiKeys: ApiKeyAuth;
  readonly project: Membership;
  readonly user: SessionUser;
}

/** Runs `handler` when the user's role in the slug's project allows `action`; a 403 page otherwise. */
export const guarded = (deps: WebDeps, apiKeys: ApiKeyAuth, action: Action, handler: (ctx: Context, form: SettingsForm) => Promise<void>) =>
  namesAction(async (ctx: Context) => {
    const { current } = await membershipOf(ctx, deps.ports.sql, ctx.params.slug);
    if (!current) return settingsPage(ctx, deps, ctx.params.slug);
    if (!can(current.role, action)) {
      return render(ctx, "error.njk", { title: "Not allowed", heading: "Not allowed", message: `Your role in ${current.name} (${current.role}) does not allow this.` }, 403);
    }
    await handler(ctx, { deps, apiKeys, project: current, user: ctx.state.user as SessionUser });
  }, action);

/** Runs a form of the page; a store refusal (ValidationError, Conflict, NotFound) shows the page with its message. */
export const settingsAction = (ctx: Context, { deps, project }: SettingsForm, values: Record<string, string>, run: () => Promise<void>) => formAction({
  refuses: ["ValidationError", "Conflict", "NotFound"],
  run,
  refused: (r) => settingsPage(ctx, deps, project.slug, { errors: { [r.field]: r.message }, values, flash: r.message }, r.status),
});

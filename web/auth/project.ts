/**
 * The project a dashboard request acts in, and whether the member may (docs/TEAMS.md). Every logged-in route names
 * its action (core/access/roles.ts): `inProject(deps, "read")` for a page, the action it performs for a form. The
 * user's current project and role are looked up on each request, so a removed member loses the project at once.
 */
import type { Context, Middleware, Next } from "koa";
import { can, type Action } from "../../core/access/roles.js";
import { AuthError, NotFound } from "../../core/errors.js";
import { currentProject, rememberProject } from "../../stores/accounts/current-project.js";
import { isInstanceAdmin } from "../../stores/accounts/instance-admin.js";
import type { Membership } from "../../stores/accounts/projects.js";
import { listSavedViews } from "../../stores/saved-views.js";
import { savedViewPath } from "../common/runs-url.js";
import type { SessionUser, WebDeps } from "../deps.js";
import { projectPath, projectSlugOf } from "../projects/project-url.js";
import { readForm } from "../forms.js";
import { render } from "../views.js";

/**
 * Whose role a route checks: the logged-in member's (`session`), or the role of the user who made the Bearer API key
 * (`key`, web/api/read-api.ts).
 */
export type Credential = "session" | "key";

/** The action each inProject (or project-page, or API) middleware checks: what the app's route table lists (web/app.ts). */
const ACTIONS = new WeakMap<Middleware, { action: Action; credential: Credential }>();
export const actionOf = (mw: unknown): { action: Action; credential: Credential } | undefined => ACTIONS.get(mw as Middleware);
/** Records that `mw` lets a request through only when the role of the member `credential` names allows `action`. */
export function namesAction<M extends Middleware>(mw: M, action: Action, credential: Credential = "session"): M {
  ACTIONS.set(mw, { action, credential });
  return mw;
}

/** The request's project (set by inProject). */
export const projectOfRequest = (ctx: Context): Membership => ctx.state.project as Membership;

/**
 * After requireUser: sets ctx.state.project to the project the URL names (`/p/{slug}/…`: a 404 when the user is not
 * its member; it becomes the one they come back to), and refuses (403) an action their role lacks. A page asked for
 * without a project in its URL is redirected to the same page of the project they last used; another request
 * without one (a script's form post) acts in that project, as it always did.
 */
export function inProject(deps: WebDeps, action: Action): Middleware {
  return namesAction(async (ctx: Context, next: Next) => {
    const user = ctx.state.user as SessionUser;
    const found = await currentProject(deps.ports.sql, user.id);
    if (!found) throw new AuthError({ code: "forbidden", message: "you are not a member of any project" });
    const slug = projectSlugOf(ctx);
    const project = slug === undefined ? found.current : found.all.find((p) => p.slug === slug);
    if (!project) throw new NotFound({ resource: "project", message: `you are not a member of a project ${JSON.stringify(slug)}` });
    if (slug === undefined && (ctx.method === "GET" || ctx.method === "HEAD") && wantsPage(ctx)) {
      ctx.redirect(projectPath(project.slug, ctx.url));
      return;
    }
    if (!can(project.role, action)) {
      const why = `a ${project.role} of ${project.name} may not ${action.replace(/_/g, " ")}`;
      if (ctx.method === "POST" && wantsPage(ctx)) return refusedForm(ctx, project, found.all, why);
      throw new AuthError({ code: "forbidden", message: why });
    }
    if (project.id !== found.current.id && isNavigation(ctx)) await rememberProject(deps.ports.sql, user.id, project.id);
    ctx.state.project = project;
    // For the layout's project switcher, and its Admin link (a page's only: not the dashboard's JSON reads).
    ctx.state.projects = found.all;
    if (wantsPage(ctx)) {
      ctx.state.instanceAdmin = await isInstanceAdmin(deps.ports.sql, user, deps.ports.config.adminEmails);
      // The project's saved views of the runs list, for the layout's sidebar.
      ctx.state.savedViews = (await listSavedViews(deps.ports.sql, project.id)).map((v) => ({ id: v.id, name: v.name, path: savedViewPath(v) }));
    }
    await next();
  }, action);
}

/** Form fields never shown back (secrets), and the CSRF token. */
const UNSHOWN = /^_csrf$|pass|secret|api_key|token/i;

/**
 * A form post the member's role does not allow: a 403 page that says why and keeps what they typed (a refused post
 * must not lose a long comment or config), with a link back to the page they came from.
 */
async function refusedForm(ctx: Context, project: Membership, all: Membership[], why: string): Promise<void> {
  ctx.state.project = project;
  ctx.state.projects = all;
  const form = await readForm(ctx).catch(() => ({}) as Record<string, string>);
  const kept = Object.entries(form).filter(([name, value]) => !UNSHOWN.test(name) && value.trim() !== "").slice(0, 20).map(([name, value]) => ({ name, value: value.slice(0, 20_000) }));
  const referer = URL.canParse(ctx.get("Referer")) ? new URL(ctx.get("Referer")) : undefined;
  const back = referer && referer.host === ctx.host ? referer.pathname + referer.search : undefined;
  render(ctx, "error.njk", { title: "Not allowed", heading: "Not allowed", message: `Your role does not allow this: ${why}.`, kept, back }, 403);
}

/**
 * A GET the member made by opening a page, not a script of a page left open in another tab (a browser marks its
 * reads `Sec-Fetch-Dest: empty`, its page loads `document`): only what they open becomes the project they come back
 * to. Clients that send no such header (scripts, the CLI) choose with every GET, as they always did.
 */
const isNavigation = (ctx: Context): boolean => ctx.method === "GET" && ["", "document"].includes(ctx.get("Sec-Fetch-Dest"));

/** A browser's page request (not the dashboard's own JSON reads, such as its realtime token). */
const wantsPage = (ctx: Context): boolean => !ctx.path.startsWith("/api/") && ctx.accepts("html", "json") === "html";

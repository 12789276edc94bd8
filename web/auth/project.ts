/**
 * The project a dashboard request acts in, and whether the member may (docs/TEAMS.md). Every logged-in route names
 * its action (core/access/roles.ts): `inProject(deps, "read")` for a page, the action it performs for a form. The
 * user's current project and role are looked up on each request, so a removed member loses the project at once.
 */
import type { Context, Middleware, Next } from "koa";
import { can, type Action } from "../../core/access/roles.js";
import { AuthError } from "../../core/errors.js";
import { currentProject } from "../../stores/accounts/current-project.js";
import { isInstanceAdmin } from "../../stores/accounts/instance-admin.js";
import type { Membership } from "../../stores/accounts/projects.js";
import type { SessionUser, WebDeps } from "../deps.js";

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

/** After requireUser: sets ctx.state.project to the user's current project, and refuses (403) an action their role lacks. */
export function inProject(deps: WebDeps, action: Action): Middleware {
  return namesAction(async (ctx: Context, next: Next) => {
    const user = ctx.state.user as SessionUser;
    const found = await currentProject(deps.ports.sql, user.id);
    if (!found) throw new AuthError({ code: "forbidden", message: "you are not a member of any project" });
    const project = found.current;
    if (!can(project.role, action)) {
      throw new AuthError({ code: "forbidden", message: `a ${project.role} of ${project.name} may not ${action.replace(/_/g, " ")}` });
    }
    ctx.state.project = project;
    // For the layout's project switcher, and its Admin link.
    ctx.state.projects = found.all;
    ctx.state.instanceAdmin = await isInstanceAdmin(deps.ports.sql, user, deps.ports.config.adminEmails);
    await next();
  }, action);
}

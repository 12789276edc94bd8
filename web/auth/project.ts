/**
 * The project a dashboard request acts in, and whether the member may (docs/TEAMS.md). Every logged-in route names
 * its action (core/access/roles.ts): `inProject(deps, "read")` for a page, the action it performs for a form. The
 * user's current project and role are looked up on each request, so a removed member loses the project at once.
 */
import type { Context, Middleware, Next } from "koa";
import { can, type Action } from "../../core/access/roles.js";
import { AuthError } from "../../core/errors.js";
import { currentProject } from "../../stores/accounts/current-project.js";
import type { Membership } from "../../stores/accounts/projects.js";
import type { SessionUser, WebDeps } from "../deps.js";

/** The request's project (set by inProject). */
export const projectOfRequest = (ctx: Context): Membership => ctx.state.project as Membership;

/** After requireUser: sets ctx.state.project to the user's current project, and refuses (403) an action their role lacks. */
export function inProject(deps: WebDeps, action: Action): Middleware {
  return async (ctx: Context, next: Next) => {
    const user = ctx.state.user as SessionUser;
    const project = await currentProject(deps.ports.sql, user.id);
    if (!project) throw new AuthError({ code: "forbidden", message: "you are not a member of any project" });
    if (!can(project.role, action)) {
      throw new AuthError({ code: "forbidden", message: `a ${project.role} of ${project.name} may not ${action.replace(/_/g, " ")}` });
    }
    ctx.state.project = project;
    await next();
  };
}

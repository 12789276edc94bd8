/**
 * Project pages live under /p/{slug}/… (docs/TEAMS.md, "Projects in the URL"): the page a member sees, and every form
 * on it, names its project, so a form acts in the project it was shown for whatever another tab switched to.
 *
 * This middleware takes the prefix off before routing, so each route is written once (`/datasets/:name`), and keeps
 * its redirects to other project pages in the same project. Which project the request acts in, and whether the
 * user is its member, is decided by inProject (web/auth/project.ts), which reads `projectSlugOf`.
 */
import type { Context, Middleware } from "koa";
import { NotFound } from "../../core/errors.js";

const PREFIX = /^\/p\/([a-z0-9][a-z0-9-]{0,62})(?=\/|$)/;

/** The project the URL names (`/p/{slug}/…`), or undefined for a URL without one. */
export const projectSlugOf = (ctx: Context): string | undefined => ctx.state.projectSlug as string | undefined;

/** The path of a project page in the project `slug`: `/p/{slug}{path}`. */
export const projectPath = (slug: string, path: string): string => `/p/${slug}${path.startsWith("/") ? path : `/${path}`}`;

/**
 * `isProjectRoute(path, method)`: whether a route of a project page answers it (only those live under /p/; any other
 * path there is a 404, so /p/x/login is not a second login page).
 */
export function projectFromUrl(isProjectRoute: (path: string, method: string) => boolean): Middleware {
  return async (ctx, next) => {
    const m = PREFIX.exec(ctx.path);
    if (!m) return next();
    const slug = m[1]!;
    const rest = ctx.path.slice(m[0].length) || "/dashboard";
    if (!isProjectRoute(rest, ctx.method)) throw new NotFound({ resource: "page", message: `no page ${rest} in a project` });
    ctx.state.projectSlug = slug;
    ctx.path = rest;
    await next();
    // A form's redirect to another project page (`/datasets/x`) stays in this project.
    const location = ctx.status >= 300 && ctx.status < 400 ? ctx.response.get("Location") : "";
    if (location.startsWith("/") && !location.startsWith("//") && !PREFIX.test(location) && isProjectRoute(location.split(/[?#]/)[0]!, "GET")) {
      ctx.set("Location", projectPath(slug, location));
    }
  };
}

/**
 * The page of another project that the switcher opens from `path`: the same section (`/datasets/faq/items` →
 * `/datasets`, `/settings/api-keys` stays), since a run or dataset of one project is not in the other.
 */
export function sectionOf(path: string | undefined): string {
  const m = /^\/(settings\/[a-z-]+|[a-z-]+)(?=\/|$)/.exec(path ?? "");
  return m ? `/${m[1]}` : "/dashboard";
}

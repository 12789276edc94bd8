/**
 * The one Nunjucks environment (autoescape on), and the render helper every page uses: it adds `user`, `csrf` (the
 * form token) and `title` to the template context. Templates are found by name in web/views (the layout, macros and
 * partials every feature shares) and in each feature's own views folder (web/<feature>/views): names are unique.
 */
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import nunjucks from "nunjucks";
import type { Context } from "koa";
import { can, type Action } from "../core/access/roles.js";
import type { Membership } from "../stores/accounts/projects.js";
import { csrfToken } from "./auth/session.js";

const WEB_DIR = path.dirname(fileURLToPath(import.meta.url));
/** web/views first, then the features' views folders. */
export const VIEW_DIRS = [
  path.join(WEB_DIR, "views"),
  ...readdirSync(WEB_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory() && d.name !== "views" && existsSync(path.join(WEB_DIR, d.name, "views")))
    .map((d) => path.join(WEB_DIR, d.name, "views"))
    .sort(),
];

export const views = new nunjucks.Environment(new nunjucks.FileSystemLoader(VIEW_DIRS, { noCache: process.env.NODE_ENV === "development" }), {
  autoescape: true,
  throwOnUndefined: false,
  trimBlocks: true,
  lstripBlocks: true,
});

/**
 * What every page's layout reads: the user, their projects and the one the page is in (`base` prefixes its links,
 * web/projects/project-url.ts), the form token, and `may(action)`, whether the member's role allows an action
 * (core/access/roles.ts), so a page shows only the controls its viewer may use.
 */
function layoutContext(ctx: Context): Record<string, unknown> {
  const project = ctx.state.project as Membership | undefined;
  return {
    user: ctx.state.user ?? null,
    current_project: project ?? null,
    base: project ? `/p/${project.slug}` : "",
    may: (action: Action) => project !== undefined && can(project.role, action),
    my_projects: ctx.state.projects ?? [],
    instance_admin: ctx.state.instanceAdmin === true,
    saved_views: ctx.state.savedViews ?? [],
    csrf: csrfToken(ctx),
    path: ctx.path,
  };
}

/** Renders `template` (a name in one of VIEW_DIRS) as the HTML response. */
export function render(ctx: Context, template: string, vars: Record<string, unknown> = {}, status = 200): void {
  const html = views.render(template, { ...layoutContext(ctx), ...vars });
  ctx.status = status;
  ctx.type = "text/html; charset=utf-8";
  ctx.body = html;
}

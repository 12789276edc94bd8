/**
 * The one Nunjucks environment (autoescape on) over web/views, and the render helper every page uses:
 * it adds `user`, `csrf` (the form token) and `title` to the template context.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import nunjucks from "nunjucks";
import type { Context } from "koa";
import { csrfToken } from "./auth/session.js";

export const VIEWS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "views");

export const views = new nunjucks.Environment(new nunjucks.FileSystemLoader(VIEWS_DIR, { noCache: process.env.NODE_ENV === "development" }), {
  autoescape: true,
  throwOnUndefined: false,
  trimBlocks: true,
  lstripBlocks: true,
});

/** Renders `template` (relative to web/views) as the HTML response. */
export function render(ctx: Context, template: string, vars: Record<string, unknown> = {}, status = 200): void {
  const html = views.render(template, { user: ctx.state.user ?? null, current_project: ctx.state.project ?? null, my_projects: ctx.state.projects ?? [], instance_admin: ctx.state.instanceAdmin === true, csrf: csrfToken(ctx), path: ctx.path, ...vars });
  ctx.status = status;
  ctx.type = "text/html; charset=utf-8";
  ctx.body = html;
}

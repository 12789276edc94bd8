/**
 * /admin: the instance admin's page (docs/TEAMS.md, Instance admin): every project and every user, and disabling a
 * user or enabling them again. Anyone else gets a 403 page.
 */
import type Router from "@koa/router";
import type { Context, Next } from "koa";
import { allUsers, isInstanceAdmin, setUserDisabled } from "../../stores/accounts/instance-admin.js";
import { allProjects } from "../../stores/accounts/projects.js";
import { requireUser } from "../auth/session.js";
import type { SessionUser, WebDeps } from "../deps.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { accessChanged } from "../middleware/access-changed.js";
import { formAction } from "../forms.js";
import { render } from "../views.js";

export function registerAdminRoutes(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  const onlyAdmins = (ctx: Context, next: Next) => requireAdmin(ctx, next, deps);
  router.get("/admin", requireUser, onlyAdmins, (ctx: Context) => adminPage(ctx, deps));
  router.post("/admin/users/:id/disable", requireUser, onlyAdmins, (ctx: Context) => setDisabled(ctx, deps, auth, true));
  router.post("/admin/users/:id/enable", requireUser, onlyAdmins, (ctx: Context) => setDisabled(ctx, deps, auth, false));
}

/** After requireUser: lets an instance admin through, shows anyone else a 403 page. */
async function requireAdmin(ctx: Context, next: Next, deps: WebDeps): Promise<void> {
  const user = ctx.state.user as SessionUser;
  if (!(await isInstanceAdmin(deps.ports.sql, user, deps.ports.config.adminEmails))) {
    render(ctx, "error.njk", { title: "Not allowed", heading: "Not allowed", message: "Only the instance's admins see this page." }, 403);
    return;
  }
  ctx.state.instanceAdmin = true;
  await next();
}

/** GET /admin, and the page a refused or mistaken form shows (`extra`: its flash) at `status`. */
async function adminPage(ctx: Context, deps: WebDeps, extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const { sql } = deps.ports;
  const [users, projects] = await Promise.all([allUsers(sql), allProjects(sql)]);
  ctx.set("Cache-Control", "no-store");
  render(ctx, "admin.njk", { title: "Instance admin", users, projects, ...extra }, status);
}

/** POST /admin/users/:id/disable and …/enable; a disabled user's API keys are refused at once. */
async function setDisabled(ctx: Context, deps: WebDeps, auth: ApiKeyAuth, disabled: boolean): Promise<void> {
  const admin = ctx.state.user as SessionUser;
  const id = Number(ctx.params.id);
  if (!Number.isSafeInteger(id) || id <= 0) return adminPage(ctx, deps, { flash: "No such user." }, 404);
  const done = await formAction({
    refuses: ["NotFound", "Conflict"],
    run: () => setUserDisabled(deps.ports.sql, id, disabled, admin.id),
    refused: (r) => adminPage(ctx, deps, { flash: r.kind === "NotFound" ? "No such user." : r.message }, r.status),
  });
  if (!done) return;
  if (disabled) await accessChanged(deps, auth, { userId: id });
  deps.logger.info(`user ${disabled ? "disabled" : "enabled"} by an instance admin`, { user_id: id, admin_id: admin.id });
  ctx.redirect("/admin");
}

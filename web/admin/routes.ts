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
  const { sql } = deps.ports;

  const requireAdmin = async (ctx: Context, next: Next) => {
    const user = ctx.state.user as SessionUser;
    if (!(await isInstanceAdmin(sql, user, deps.ports.config.adminEmails))) {
      render(ctx, "error.njk", { title: "Not allowed", heading: "Not allowed", message: "Only the instance's admins see this page." }, 403);
      return;
    }
    ctx.state.instanceAdmin = true;
    await next();
  };

  const page = async (ctx: Context, extra: Record<string, unknown> = {}, status = 200) => {
    const [users, projects] = await Promise.all([allUsers(sql), allProjects(sql)]);
    ctx.set("Cache-Control", "no-store");
    render(ctx, "admin.njk", { title: "Instance admin", users, projects, ...extra }, status);
  };

  router.get("/admin", requireUser, requireAdmin, (ctx) => page(ctx));

  for (const [verb, disabled] of [["disable", true], ["enable", false]] as const) {
    router.post(`/admin/users/:id/${verb}`, requireUser, requireAdmin, async (ctx) => {
      const admin = ctx.state.user as SessionUser;
      const id = Number(ctx.params.id);
      if (!Number.isSafeInteger(id) || id <= 0) return page(ctx, { flash: "No such user." }, 404);
      const done = await formAction({
        refuses: ["NotFound", "Conflict"],
        run: () => setUserDisabled(sql, id, disabled, admin.id),
        refused: (r) => page(ctx, { flash: r.kind === "NotFound" ? "No such user." : r.message }, r.status),
      });
      if (!done) return;
      if (disabled) await accessChanged(deps, auth, { userId: id });
      deps.logger.info(`user ${verb}d by an instance admin`, { user_id: id, admin_id: admin.id });
      ctx.redirect("/admin");
    });
  }
}

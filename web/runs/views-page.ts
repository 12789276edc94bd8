/**
 * Saving and deleting a view from the runs page (stores/saved-views.ts; docs/DASHBOARD.md, Saved views):
 *   POST /runs/views             {name, q, sort, order, cols}: the page's state under a name → the view's URL
 *   POST /runs/views/:id/delete  → the runs page with the same filter, no longer a saved view
 * A refused name (taken, too long, the project's views at their cap) shows the page again with the message by the
 * form and the name as typed.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { checkSavedView, deleteSavedView, insertSavedView, type NewSavedView } from "../../stores/saved-views.js";
import { projectOfRequest } from "../auth/project.js";
import type { SessionUser, WebDeps } from "../deps.js";
import { formAction, readForm, redirectAfterPost } from "../forms.js";
import { savedViewPath } from "../common/runs-url.js";
import { mountPages } from "../route-table.js";
import { renderRunsPage } from "./dashboard-page.js";
import { readRunsPageState } from "./runs-page-state.js";

export function registerViewsPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    edit_views: { "POST /runs/views": saveView, "POST /runs/views/:id/delete": deleteView },
  });
}

async function saveView(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  const project = projectOfRequest(ctx);
  const state = readRunsPageState((name) => form[name]?.trim() || undefined);
  await formAction({
    refuses: ["ValidationError", "Conflict"],
    field: "name",
    run: async () => {
      const view: NewSavedView = checkSavedView({ name: form.name ?? "", filter: state.view.q, columns: state.view.cols, sort: state.view.sort, order: state.view.order });
      const saved = await insertSavedView(deps.ports.sql, project.id, (ctx.state.user as SessionUser).id, view);
      redirectAfterPost(ctx, `/p/${project.slug}${savedViewPath(saved)}`);
    },
    refused: (r) => renderRunsPage(ctx, deps, "dashboard", state, { save_error: r.message, save_name: form.name ?? "" }, r.status),
  });
}

async function deleteView(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  const form = await readForm(ctx);
  await deleteSavedView(deps.ports.sql, project.id, ctx.params.id!);
  const back = form.back?.startsWith("/dashboard") ? form.back : "/dashboard";
  redirectAfterPost(ctx, `/p/${project.slug}${back}`);
}

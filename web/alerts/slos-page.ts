/** GET /slos: the project's SLOs, each with its budget left and its burn rates now (the API's numbers). */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { WebDeps } from "../deps.js";
import { projectOfRequest } from "../auth/project.js";
import { renderPage } from "../common/render.js";
import { BURN_ALERTS } from "../../alerts/index.js";
import { listSlos } from "../../stores/slos.js";
import { mountPages } from "../route-table.js";
import { slosWithStatus } from "./slos-api.js";

export function registerSlosPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, { read: { "GET /slos": (ctx: Context) => slosPage(ctx, deps) } });
}

async function slosPage(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  const slos = await slosWithStatus(deps, project.id, await listSlos(deps.ports.sql, project.id));
  renderPage(ctx, "slos.njk", { title: "SLOs", slos, burn: BURN_ALERTS });
}

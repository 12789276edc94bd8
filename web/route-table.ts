/**
 * A feature's routes as a table keyed by the action they need: `{ read: { "GET /agents": listPage }, edit_agents: {
 * "POST /agents": newAgent } }`. Grouping by action puts what a viewer may do beside what an editor may, and mounts
 * every route of a kind with the same guards: a page route needs a signed-in member of the request's project whose
 * role may do the action (web/auth/project.ts inProject); an API route, a key whose creator's role may
 * (web/api/read-api.ts). Routes are mounted in the order they are listed, group by group.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { Action } from "../core/access/roles.js";
import type { KeyAuthorizer } from "./api/read-api.js";
import { inProject } from "./auth/project.js";
import { requireUser } from "./auth/session.js";
import type { WebDeps } from "./deps.js";

/** A route's body. */
export type RouteHandler = (ctx: Context, deps: WebDeps) => unknown;
/** "METHOD /path" → handler, e.g. `"POST /agents/:name/configs": addConfigVersion`. */
export type Routes = Readonly<Record<string, RouteHandler>>;
/** The routes each action guards. */
export type RouteTable = Partial<Readonly<Record<Action, Routes>>>;

const METHODS = { GET: "get", POST: "post", PUT: "put", PATCH: "patch", DELETE: "delete" } as const;

function eachRoute(table: RouteTable, mount: (method: (typeof METHODS)[keyof typeof METHODS], path: string, action: Action, handler: RouteHandler) => void): void {
  for (const [action, routes] of Object.entries(table) as [Action, Routes][]) {
    for (const [route, handler] of Object.entries(routes)) {
      const [verb, path] = route.split(" ");
      const method = METHODS[verb as keyof typeof METHODS];
      if (!method || !path?.startsWith("/")) throw new Error(`route ${JSON.stringify(route)} is not "METHOD /path"`);
      mount(method, path, action, handler);
    }
  }
}

/** Mounts dashboard pages and forms: a signed-in member whose role in the request's project may do the action. */
export function mountPages(router: Router, deps: WebDeps, table: RouteTable): void {
  eachRoute(table, (method, path, action, handler) => {
    router[method](path, requireUser, inProject(deps, action), (ctx: Context) => handler(ctx, deps));
  });
}

/** Mounts API routes behind `authorize`: a key whose creator's role in its project may do the action. */
export function mountApi(router: Router, deps: WebDeps, authorize: KeyAuthorizer, table: RouteTable): void {
  eachRoute(table, (method, path, action, handler) => {
    router[method](path, authorize.may(action), (ctx: Context) => handler(ctx, deps));
  });
}

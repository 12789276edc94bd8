import type Router from "@koa/router";
import type { WebDeps } from "../deps.js";

/**
 * Mounts the session-authenticated dashboard pages (/dashboard, /dashboard/:run, /agents, /alerts, /costs, ...).
 * Each page module exports register(router, deps); add one line per module here.
 */
export function registerPages(router: Router, deps: WebDeps): void {
  void router;
  void deps;
}

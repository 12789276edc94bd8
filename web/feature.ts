/**
 * What a web feature folder (web/runs, web/evaluation, …) offers the app: its API routes and pages, and its OpenAPI
 * paths beside them. Each folder's index.ts exports one; web/features.ts lists them.
 * Inside a folder, a module that mounts routes exports `register<Thing>Api` or `register<Thing>Page`: a table of its
 * routes by the action they need (web/route-table.ts), each route's body a named function of its own below it.
 */
import type Router from "@koa/router";
import type { Operations } from "./api/openapi/document.js";
import type { WebDeps } from "./deps.js";
import type { ApiKeyAuth } from "./middleware/api-key-auth.js";

/** Mounts an API's routes (authenticated by API key, or by session where a route says so). */
export type ApiRegistrar = (router: Router, deps: WebDeps, apiKeys: ApiKeyAuth) => void;
/** Mounts a page's routes (a dashboard session). */
export type PageRegistrar = (router: Router, deps: WebDeps) => void;

export interface WebFeature {
  readonly name: string;
  /** Mounted in this order, before its pages. */
  readonly apis?: readonly ApiRegistrar[];
  readonly pages?: readonly PageRegistrar[];
  /** The paths of its public API in the OpenAPI document (GET /api/openapi.json). */
  readonly openapi?: Operations;
}

/** Mounts a feature: its APIs, then its pages. */
export function registerFeature(feature: WebFeature, router: Router, deps: WebDeps, apiKeys: ApiKeyAuth): void {
  for (const register of feature.apis ?? []) register(router, deps, apiKeys);
  for (const register of feature.pages ?? []) register(router, deps);
}

/**
 * What a web feature folder (web/runs, web/evaluation, …) offers the app: its API routes and pages, mounted by
 * `register`, and its OpenAPI paths beside them. Each folder's index.ts exports one; web/features.ts lists them.
 * Inside a folder, a module that mounts routes exports `register<Thing>Api` or `register<Thing>Page`.
 */
import type Router from "@koa/router";
import type { Operations } from "./api/openapi/document.js";
import type { WebDeps } from "./deps.js";
import type { ApiKeyAuth } from "./middleware/api-key-auth.js";

export interface WebFeature {
  readonly name: string;
  register(router: Router, deps: WebDeps, apiKeys: ApiKeyAuth): void;
  /** The paths of its public API in the OpenAPI document (GET /api/openapi.json). */
  readonly openapi?: Operations;
}

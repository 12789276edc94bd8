/**
 * GET /api/openapi.json (no auth): the OpenAPI 3.1 document (document.ts), built once per process.
 * GET /api/docs: an API reference page (Swagger UI from the swagger-ui-dist package, served from here: no CDN).
 */
import { createRequire } from "node:module";
import path from "node:path";
import type Router from "@koa/router";
import type { Middleware } from "koa";
import type { WebDeps } from "../../deps.js";
import { serveStatic } from "../../static-files.js";
import { buildOpenApi, type Operations } from "./document.js";

const require = createRequire(import.meta.url);
const SWAGGER_DIR = path.dirname(require.resolve("swagger-ui-dist/package.json"));
/** The server's version: the repository's package.json, from the sources (web/api/openapi) or the build (dist/web/…). */
const VERSION = ((): string => {
  for (let dir = path.dirname(new URL(import.meta.url).pathname), i = 0; i < 6; i++, dir = path.dirname(dir)) {
    try {
      const pkg = require(path.join(dir, "package.json")) as { name?: string; version?: string };
      if (pkg.name === "runwatch-server" && pkg.version) return pkg.version;
    } catch {
      // not here: one level up
    }
  }
  return "0.0.0";
})();
export const DOCS_ASSETS = "/api/docs/assets/";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Runwatch API reference</title>
<link rel="icon" href="${DOCS_ASSETS}favicon-32x32.png">
<link rel="stylesheet" href="${DOCS_ASSETS}swagger-ui.css">
<link rel="stylesheet" href="/static/api-docs.css">
</head>
<body>
<header class="api-docs-head"><a href="/">Runwatch</a> · API reference · <a href="/api/openapi.json">openapi.json</a></header>
<div id="swagger-ui"></div>
<script src="${DOCS_ASSETS}swagger-ui-bundle.js"></script>
<script src="/static/api-docs.js"></script>
</body>
</html>
`;

/** Serves Swagger UI's files under /api/docs/assets/. */
export const serveApiDocsAssets = (): Middleware => serveStatic(SWAGGER_DIR, DOCS_ASSETS);

export function registerOpenApi(router: Router, deps: WebDeps, operations: Operations): void {
  let doc: string | undefined;
  router.get("/api/openapi.json", (ctx) => {
    doc ??= JSON.stringify(buildOpenApi({ version: VERSION, serverUrl: deps.ports.config.publicWebUrl, operations }));
    ctx.set("Cache-Control", "public, max-age=300");
    ctx.set("Access-Control-Allow-Origin", "*"); // public, no credentials: other tools may load it
    ctx.type = "application/json";
    ctx.body = doc;
  });
  router.get("/api/docs", (ctx) => {
    ctx.type = "text/html";
    ctx.body = PAGE;
  });
}

/**
 * The web application (Koa): ingest and the OTLP receiver, then every web feature's API routes (Bearer key) and pages
 * (session) as web/features.ts lists them, static files.
 *
 * Ingest is dispatched by the first middleware on an exact path match, ahead of sessions, routing and
 * page concerns, so the hot path does only: key lookup (cached), rate-limit token, body read, validation,
 * durable append.
 */
import { PROMETHEUS_CONTENT_TYPE, prometheusText } from "./metrics.js";
import { actionOf, type Credential } from "./auth/project.js";
import type { Action } from "../core/access/roles.js";
import Koa from "koa";
import type { Context } from "koa";
import Router from "@koa/router";
import type { WebDeps } from "./deps.js";
import { HttpProblem, sendError, toHttpError } from "./http-errors.js";
import { createApiKeyAuth, type ApiKeyAuth } from "./middleware/api-key-auth.js";
import { ingestHandlers } from "./ingest/routes.js";
import { createAdmission } from "./ingest/admission.js";
import { OTLP_HTTP_PATHS, otlpHttpHandler } from "./otlp/http-route.js";
import { registerOpenApi, serveApiDocsAssets } from "./api/openapi/routes.js";
import { API_OPERATIONS, WEB_FEATURES } from "./features.js";
import { registerFeature } from "./feature.js";
import { csrfProtection, sessionMiddleware } from "./auth/session.js";
import { projectFromUrl } from "./projects/project-url.js";
import { serveStatic } from "./static-files.js";
import { serveChartAssets } from "./chart-assets.js";
import { securityHeaders } from "./middleware/security-headers.js";
import { gatewayBaseUrl } from "./realtime-url.js";
import { throttleKeyFailures } from "./middleware/api-key-throttle.js";
import { clientAddress } from "../core/network/client-address.js";
import { render } from "./views.js";

export interface WebApp extends Koa {
  /** The Bearer key authenticator (exposed so revocations elsewhere in the process can evict a key). */
  readonly apiKeys: ApiKeyAuth;
  /** Every route, with the project action (core/access/roles.ts) a member's role must allow for it, if any. */
  readonly routes: readonly RouteEntry[];
}

export interface RouteEntry {
  readonly path: string;
  readonly methods: readonly string[];
  readonly action?: Action;
  /** With an action: whose role is checked, the session's member or the API key's creator (web/auth/project.ts). */
  readonly credential?: Credential;
}

/** An API client: an API path or the MCP endpoint, a JSON Accept without HTML, or a Bearer key (which only API routes read). */
const isApiRequest = (ctx: Context) =>
  ctx.path.startsWith("/api/") || ctx.path === "/mcp" || ctx.path.startsWith("/v1/") || /^Bearer\s/i.test(ctx.get("Authorization")) ||
  (ctx.get("Accept").includes("application/json") && !ctx.get("Accept").includes("text/html"));

const PAGE_HEADINGS: Record<number, string> = {
  400: "Bad request", 401: "Please log in", 403: "Not allowed", 404: "Page not found", 413: "Too large",
  422: "Check the form", 429: "Slow down", 500: "Something went wrong", 503: "Temporarily unavailable",
};

export function createWebApp(deps: WebDeps): WebApp {
  const app = new Koa() as WebApp;
  app.keys = [deps.sessionSecret];
  // Behind an https public URL there is a TLS-terminating proxy: trust X-Forwarded-Proto so Secure cookies work.
  // The client's address is another matter: X-Forwarded-For counts only through the proxies the operator names
  // (RUNWATCH_TRUSTED_PROXIES; core/network/client-address.ts), set on each request below.
  const trust = deps.ports.config.trustedProxies;
  app.proxy = deps.ports.config.publicWebUrl.startsWith("https:") || trust.kind !== "none";
  const apiKeys = throttleKeyFailures(createApiKeyAuth(deps.ports.sql, deps.logger), deps.throttles.badKeysPerIp, deps.logger);
  Object.defineProperty(app, "apiKeys", { value: apiKeys });
  const ingest = ingestHandlers(deps, apiKeys);
  const otlpDeps = {
    admission: createAdmission(deps, apiKeys),
    decoder: deps.batchDecoder,
    log: deps.ports.log,
    logger: deps.logger,
    maxBodyBytes: deps.ports.config.otlpMaxBodyBytes,
  };
  const otlp = new Map(Object.entries(OTLP_HTTP_PATHS).map(([path, signal]) => [path, otlpHttpHandler(otlpDeps, signal)]));

  app.use((ctx, next) => {
    ctx.request.ip = clientAddress(ctx.req.socket.remoteAddress ?? "", ctx.get("x-forwarded-for") || undefined, trust);
    return next();
  });
  // Errors: JSON `{error:{code,message,field?}}` for APIs, an HTML page otherwise; 500s are logged.
  app.use(async (ctx, next) => {
    try {
      await next();
      if (ctx.body === undefined && ctx.status === 404) {
        throw new HttpProblem(404, "not_found", `no route for ${ctx.method} ${ctx.path}`);
      }
      if (ctx.body === undefined && ctx.status === 405) {
        throw new HttpProblem(405, "method_not_allowed", `${ctx.method} is not allowed on ${ctx.path}; allowed: ${ctx.response.get("Allow")}`);
      }
    } catch (err) {
      const e = toHttpError(err);
      if (e.status >= 500 && e.status !== 503) deps.logger.error("request failed", { method: ctx.method, path: ctx.path, err });
      if (e.status === 503) deps.logger.warn("dependency unavailable", { method: ctx.method, path: ctx.path, err });
      if (isApiRequest(ctx)) {
        sendError(ctx, err);
      } else {
        for (const [k, v] of Object.entries(e.headers)) ctx.set(k, v);
        try {
          render(ctx, "error.njk", { title: PAGE_HEADINGS[e.status] ?? "Error", heading: PAGE_HEADINGS[e.status] ?? "Error", message: e.body.error.message }, e.status);
        } catch {
          sendError(ctx, err);
        }
      }
    }
  });

  app.use(async (ctx, next) => {
    const p = ctx.path;
    if (p === "/api/ingest" || p === "/api/ingest/batch") {
      if (ctx.method !== "POST") {
        ctx.set("Allow", "POST");
        throw new HttpProblem(405, "method_not_allowed", `${ctx.method} is not allowed on ${p}; use POST`);
      }
      return p === "/api/ingest" ? ingest.single(ctx) : ingest.batch(ctx);
    }
    const otlpHandler = otlp.get(p);
    if (otlpHandler) {
      if (ctx.method !== "POST") {
        ctx.set("Allow", "POST");
        throw new HttpProblem(405, "method_not_allowed", `${ctx.method} is not allowed on ${p}; OTLP exporters POST here`);
      }
      return otlpHandler(ctx);
    }
    return next();
  });

  app.use(securityHeaders({ publicWebUrl: deps.ports.config.publicWebUrl, gatewayBaseUrl: (ctx) => gatewayBaseUrl(ctx, deps) }));

  app.use(serveStatic());
  app.use(serveApiDocsAssets());
  app.use(serveChartAssets());
  app.use(sessionMiddleware(app, deps));
  const router = new Router();
  // Only a request that reaches a route can change anything: an unknown path (a typo in an API client's URL) is
  // answered 404 not_found, not 403 csrf_failed.
  // Project pages under /p/{slug}/… (web/projects/project-url.ts): the routes a member's session role guards.
  app.use(projectFromUrl((path, method) =>
    router.match(path, method).pathAndMethod.some((layer) => layer.stack.some((mw) => actionOf(mw)?.credential === "session"))));
  app.use((ctx, next) => (router.match(ctx.path, ctx.method).route ? csrfProtection(ctx, next) : next()));

  router.get("/healthz", async (ctx) => {
    ctx.set("Cache-Control", "no-store");
    const body = await deps.health.snapshot();
    // ?verbose=1 adds the pipeline's own counters (docs/PIPELINE.md, "Counters").
    ctx.body = ctx.query.verbose === "1" ? { ...body, pipeline: { ...body.pipeline, counters: deps.health.counters() ?? null } } : body;
  });
  router.get("/metrics", async (ctx) => {
    ctx.set("Cache-Control", "no-store");
    ctx.type = PROMETHEUS_CONTENT_TYPE;
    ctx.body = prometheusText(await deps.health.snapshot(), deps.health.counters(), deps.jobs.jobs());
  });
  for (const feature of WEB_FEATURES) registerFeature(feature, router, deps, apiKeys);
  registerOpenApi(router, deps, API_OPERATIONS);
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: false }));
  (app as { routes: readonly RouteEntry[] }).routes = router.stack.map((layer): RouteEntry => {
    const named = layer.stack.map(actionOf).find((a) => a !== undefined);
    return { path: String(layer.path), methods: layer.methods.filter((m) => m !== "HEAD"), ...named };
  });
  return app;
}

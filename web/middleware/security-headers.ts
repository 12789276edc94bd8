/**
 * Response headers that make the browser enforce what the pages already do (docs/SECURITY.md):
 * - Content-Security-Policy: scripts only from this origin (no inline script, no eval), styles from this origin
 *   (inline style *attributes* are allowed: the server renders bar widths as `style="width: N%"`; they cannot
 *   run code), WebSocket connections to the gateway's public URL, no plugins, no <base>, forms post to us only,
 *   and no framing (frame-ancestors 'none', with X-Frame-Options for old browsers).
 * - Strict-Transport-Security when the public URL is https (a plain-http deployment must not pin itself).
 * - Referrer-Policy same-origin, X-Content-Type-Options nosniff, Cross-Origin-Opener-Policy same-origin.
 * API answers get a CSP that allows nothing: they are JSON, never a document (except /api/docs, a page).
 */
import type { Context, Middleware } from "koa";

export function securityHeaders(opts: { publicWebUrl: string; gatewayBaseUrl: (ctx: Context) => string }): Middleware {
  const pageCsp = (gatewayOrigin: string) => [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "style-src-attr 'unsafe-inline'",
    "img-src 'self' data:",
    `connect-src 'self'${gatewayOrigin ? ` ${gatewayOrigin}` : ""}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
  const apiCsp = "default-src 'none'; frame-ancestors 'none'";
  // The gateway's origin as this request's browser reaches it; a Host header that makes no URL gets none.
  const gatewayOrigin = (ctx: Context): string => {
    try {
      return new URL(opts.gatewayBaseUrl(ctx)).origin;
    } catch {
      return "";
    }
  };
  const hsts = opts.publicWebUrl.startsWith("https:") ? "max-age=31536000; includeSubDomains" : undefined;
  return async (ctx, next) => {
    const api = (ctx.path.startsWith("/api/") && ctx.path !== "/api/docs" && !ctx.path.startsWith("/api/docs/")) || ctx.path === "/healthz" || ctx.path === "/metrics";
    ctx.set("X-Content-Type-Options", "nosniff");
    ctx.set("Content-Security-Policy", api ? apiCsp : pageCsp(gatewayOrigin(ctx)));
    if (hsts) ctx.set("Strict-Transport-Security", hsts);
    if (!api) {
      ctx.set("X-Frame-Options", "DENY");
      ctx.set("Referrer-Policy", "same-origin");
      ctx.set("Cross-Origin-Opener-Policy", "same-origin");
    }
    return next();
  };
}

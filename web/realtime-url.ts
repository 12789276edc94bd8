/** Where a browser reaches the realtime gateway: for the token endpoint and the Content-Security-Policy. */
import type { Context } from "koa";
import type { WebDeps } from "./deps.js";

/**
 * RUNWATCH_PUBLIC_GATEWAY_URL when set; otherwise the gateway port on the host the browser used to reach web,
 * so a dashboard opened as http://server:8080 connects to ws://server:8082 rather than to its own localhost.
 */
export function gatewayBaseUrl(ctx: Context, deps: Pick<WebDeps, "ports">): string {
  const c = deps.ports.config;
  if (c.publicGatewayUrl !== `ws://localhost:${c.gatewayPort}`) return c.publicGatewayUrl.replace(/\/$/, "");
  const host = ctx.hostname.includes(":") ? `[${ctx.hostname}]` : ctx.hostname;
  return `${ctx.protocol === "https" ? "wss" : "ws"}://${host}:${c.gatewayPort}`;
}

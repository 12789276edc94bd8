/** GET /api/realtime/token: what a logged-in page needs to open the live WebSocket (docs/REALTIME.md). */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { WebDeps } from "../deps.js";
import type { SessionUser } from "../deps.js";
import { requireUser } from "../auth/session.js";
import { userChannel } from "../../core/ports/pubsub.js";
import { signRealtimeToken } from "../../core/tokens.js";

export function register(router: Router, deps: WebDeps): void {
  router.get("/api/realtime/token", requireUser, (ctx) => {
    const user = ctx.state.user as SessionUser;
    const { token, exp } = signRealtimeToken(deps.sessionSecret, user.id);
    ctx.set("Cache-Control", "no-store");
    ctx.body = {
      url: `${gatewayBaseUrl(ctx, deps)}/ws`,
      token,
      channel: userChannel(user.id),
      expires_at: new Date(exp * 1000).toISOString(),
    };
  });
}

/**
 * RUNWATCH_PUBLIC_GATEWAY_URL when set; otherwise the gateway port on the host the browser used to reach web,
 * so a dashboard opened as http://server:8080 connects to ws://server:8082 rather than to its own localhost.
 */
function gatewayBaseUrl(ctx: Context, deps: WebDeps): string {
  const c = deps.ports.config;
  if (c.publicGatewayUrl !== `ws://localhost:${c.gatewayPort}`) return c.publicGatewayUrl.replace(/\/$/, "");
  const host = ctx.hostname.includes(":") ? `[${ctx.hostname}]` : ctx.hostname;
  return `${ctx.protocol === "https" ? "wss" : "ws"}://${host}:${c.gatewayPort}`;
}

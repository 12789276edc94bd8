/** GET /api/realtime/token: what a logged-in page needs to open the live WebSocket (docs/REALTIME.md). */
import type Router from "@koa/router";
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
      url: `${deps.ports.config.publicGatewayUrl.replace(/\/$/, "")}/ws`,
      token,
      channel: userChannel(user.id),
      expires_at: new Date(exp * 1000).toISOString(),
    };
  });
}

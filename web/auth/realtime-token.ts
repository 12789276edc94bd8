/** GET /api/realtime/token: what a logged-in page needs to open the live WebSocket (docs/REALTIME.md). */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { WebDeps } from "../deps.js";
import type { SessionUser } from "../deps.js";
import { realtimeSessionId } from "./session.js";
import { projectOfRequest } from "./project.js";
import { projectChannel } from "../../core/ports/pubsub.js";
import { gatewayBaseUrl } from "../realtime-url.js";
import { REALTIME_SUBPROTOCOL, signRealtimeToken, TOKEN_PROTOCOL_PREFIX } from "../../core/tokens.js";
import { mountPages } from "../route-table.js";

export function registerRealtimeTokenApi(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: { "GET /api/realtime/token": realtimeToken },
  });
}

function realtimeToken(ctx: Context, deps: WebDeps): void {
  const user = ctx.state.user as SessionUser;
  const project = projectOfRequest(ctx);
  // The dashboard's live view is its current project's channel (docs/TEAMS.md).
  const { token, exp } = signRealtimeToken(deps.sessionSecret, user.id, realtimeSessionId(ctx), undefined, undefined, project.id);
  ctx.set("Cache-Control", "no-store");
  ctx.body = {
    url: `${gatewayBaseUrl(ctx, deps)}/ws`,
    token,
    // Offer these as WebSocket subprotocols: new WebSocket(url, protocols). The token is never put in the URL.
    protocols: [REALTIME_SUBPROTOCOL, `${TOKEN_PROTOCOL_PREFIX}${token}`],
    channel: projectChannel(project.id),
    expires_at: new Date(exp * 1000).toISOString(),
  };
}

/** Signing in (password and OpenID Connect) and the token a live page opens the gateway with. */
import type { WebFeature } from "../feature.js";
import { registerOidcRoutes } from "./oidc.js";
import { REALTIME_OPERATIONS } from "./realtime-openapi.js";
import { registerRealtimeTokenApi } from "./realtime-token.js";
import { registerAuthRoutes } from "./routes.js";

export const auth: WebFeature = {
  name: "auth",
  pages: [
    registerAuthRoutes,
    (router, deps) => {
      if (deps.ports.config.oidc) registerOidcRoutes(router, deps, deps.ports.config.oidc);
    },
    registerRealtimeTokenApi,
  ],
  openapi: REALTIME_OPERATIONS,
};

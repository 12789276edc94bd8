/** The realtime token's part of the OpenAPI document (realtime-token.ts). */
import type { Operations } from "../api/openapi/document.js";
import * as R from "../api/openapi/schemas.js";

export const REALTIME_OPERATIONS: Operations = {
  "/api/realtime/token": {
    get: { tag: "Realtime", summary: "A token to open the live WebSocket (dashboard session)", sessionAuth: true, ok: { 200: R.RealtimeToken }, errors: [401] },
  },
};

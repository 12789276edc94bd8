/** The agent config API's part of the OpenAPI document (agent-config-api.ts). */
import { Schema } from "effect";
import type { Operations } from "../api/openapi/document.js";
import * as R from "../api/openapi/schemas.js";

export const AGENTS_OPERATIONS: Operations = {
  "/api/agents/{name}/config": {
    get: {
      tag: "Agents", summary: "The agent's active config version",
      params: [{ name: "name", in: "path", required: true, schema: Schema.String }, { name: "If-None-Match", in: "header", schema: Schema.String, description: "The ETag of the version you have: 304 while it is still active." }],
      ok: { 200: R.AgentConfig, 304: null }, errors: [401, 403, 404, 429],
    },
  },
};

/** Read-only SQL over the project's data: its API (query-api.ts) and OpenAPI paths (query-openapi.ts). */
import type { WebFeature } from "../feature.js";
import { registerQueryApi } from "./query-api.js";
import { QUERY_OPERATIONS } from "./query-openapi.js";

export const query: WebFeature = {
  name: "query",
  apis: [registerQueryApi],
  openapi: QUERY_OPERATIONS,
};

/**
 * Read-only SQL over the project's data: its API (query-api.ts) and OpenAPI paths (query-openapi.ts), the request
 * every route that runs a query reads (query-request.ts), the query page (query-page.ts), its downloads
 * (query-export-api.ts, result-file.ts) and saved queries (saved-queries-api.ts).
 */
import type { WebFeature } from "../feature.js";
import { registerQueryApi } from "./query-api.js";
import { registerQueryExportApi } from "./query-export-api.js";
import { QUERY_EXPORT_OPERATIONS } from "./query-export-openapi.js";
import { QUERY_OPERATIONS } from "./query-openapi.js";
import { registerQueryPage } from "./query-page.js";
import { registerSavedQueriesApi } from "./saved-queries-api.js";
import { SAVED_QUERY_OPERATIONS } from "./saved-queries-openapi.js";

export const query: WebFeature = {
  name: "query",
  apis: [registerQueryApi, registerQueryExportApi, registerSavedQueriesApi],
  pages: [registerQueryPage],
  openapi: { ...QUERY_OPERATIONS, ...QUERY_EXPORT_OPERATIONS, ...SAVED_QUERY_OPERATIONS },
};

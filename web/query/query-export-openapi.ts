/** The query export's part of the OpenAPI document (web/query/query-export-api.ts). */
import { Schema } from "effect";
import type { Operations } from "../api/openapi/document.js";
import { q } from "../api/openapi/operation.js";
import { QueryBody } from "./query-openapi.js";

export const QUERY_EXPORT_OPERATIONS: Operations = {
  "/api/query/export": {
    post: {
      tag: "Query", summary: "Run a read-only query and download its rows as CSV or JSON Lines",
      description: "The same checks and bounds as POST /api/query. X-Runwatch-Query-Rows says how many rows the file holds, X-Runwatch-Query-Truncated " +
        "whether a bound cut it and X-Runwatch-Query-Limit which (rows or bytes). CSV text cells that start like a spreadsheet formula get a leading apostrophe.",
      params: [q("format", Schema.Literal("csv", "jsonl"), "Default csv.")],
      body: QueryBody,
      ok: { 200: null }, okTypes: ["text/csv", "application/x-ndjson"], errors: [400, 401, 403, 413, 415, 422, 429],
    },
  },
};

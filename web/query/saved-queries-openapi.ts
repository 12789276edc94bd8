/** Saved queries' part of the OpenAPI document (web/query/saved-queries-api.ts). */
import { Schema } from "effect";
import { SavedQueryInput } from "../../stores/saved-queries.js";
import type { Operations } from "../api/openapi/document.js";

const Iso = Schema.String.annotations({ format: "date-time" });
const Id = { name: "id", in: "path" as const, required: true, schema: Schema.String.annotations({ format: "uuid" }) };

const SavedQuery = Schema.Struct({
  id: Schema.String.annotations({ format: "uuid" }),
  name: Schema.String,
  description: Schema.String,
  sql: Schema.String,
  params: Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Array(Schema.Union(Schema.String, Schema.Number, Schema.Boolean))) }),
  created_by: Schema.NullOr(Schema.Number).annotations({ description: "The member who saved it first; null once their account is gone." }),
  author: Schema.NullOr(Schema.String).annotations({ description: "That member's name." }),
  updated_by: Schema.NullOr(Schema.Number),
  created_at: Iso,
  updated_at: Iso,
}).annotations({ identifier: "SavedQuery" });

const One = Schema.Struct({ query: SavedQuery }).annotations({ identifier: "SavedQueryAnswer" });
const WRITE_DESCRIPTION = "At most 200 saved queries a project; a name is unique in its project (409 query_exists). The SQL is kept as written (at most 20,000 " +
  "characters) and checked when it runs (POST /api/query), not when it is saved.";

export const SAVED_QUERY_OPERATIONS: Operations = {
  "/api/queries": {
    get: { tag: "Query", summary: "The project's saved queries, by name", ok: { 200: Schema.Struct({ queries: Schema.Array(SavedQuery) }).annotations({ identifier: "SavedQueryList" }) }, errors: [401, 403, 405, 429] },
    post: {
      tag: "Query", summary: "Save a query (a name, its SQL, parameters and a description)", body: SavedQueryInput, description: WRITE_DESCRIPTION,
      ok: { 201: One }, errors: [400, 401, 403, 405, 409, 413, 415, 422, 429],
    },
  },
  "/api/queries/{id}": {
    get: { tag: "Query", summary: "One saved query", params: [Id], ok: { 200: One }, errors: [401, 403, 404, 405, 429] },
    put: {
      tag: "Query", summary: "Replace a saved query (rename it, change its SQL, parameters or description)", params: [Id], body: SavedQueryInput,
      description: WRITE_DESCRIPTION, ok: { 200: One }, errors: [400, 401, 403, 404, 405, 409, 413, 415, 422, 429],
    },
    delete: { tag: "Query", summary: "Delete a saved query", params: [Id], ok: { 204: null }, errors: [401, 403, 404, 405, 429] },
  },
};

/** The datasets API's part of the OpenAPI document (web/datasets/datasets-api.ts; docs/EVALUATION.md). */
import { Schema } from "effect";
import { MAX_DATASET_DESCRIPTION, MAX_DATASET_NAME } from "../../stores/datasets/datasets.js";
import { ITEM_SOURCES, ITEM_STATUSES, ItemInput, MAX_ITEM_ID } from "../../stores/datasets/items.js";
import { Limit, q, type Param } from "../api/openapi/operation.js";
import type { Operations } from "../api/openapi/document.js";

const Iso = Schema.String.annotations({ format: "date-time" });
const Count = Schema.Int.pipe(Schema.nonNegative());
const Version = Schema.Int.pipe(Schema.nonNegative()).annotations({ description: "0 before the first items." });

const JsonSchema = Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.Unknown })).annotations({ description: "A JSON Schema (2020-12) the items' part must match; null for none." });

const Dataset = Schema.Struct({
  id: Count, name: Schema.String, description: Schema.String, input_schema: JsonSchema, expected_output_schema: JsonSchema, version: Version,
  item_count: Count.annotations({ description: "Active items in the current version." }), created_at: Iso, updated_at: Iso,
}).annotations({ identifier: "Dataset" });

const DatasetVersion = Schema.Struct({
  version: Count, change: Schema.String.annotations({ description: "What made it: items, import, …" }),
  changed: Count.annotations({ description: "Items this version wrote." }), item_count: Count,
  created_by: Schema.NullOr(Schema.String), created_at: Iso,
}).annotations({ identifier: "DatasetVersion" });

const DatasetItem = Schema.Struct({
  id: Schema.String, input: Schema.Unknown, expected_output: Schema.Unknown, metadata: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  source: Schema.Literal(...ITEM_SOURCES), source_sdk_run_id: Schema.NullOr(Schema.String), source_span_id: Schema.NullOr(Schema.String),
  status: Schema.Literal(...ITEM_STATUSES), version: Count.annotations({ description: "The version that wrote this revision of the item." }), created_at: Iso,
}).annotations({ identifier: "DatasetItem" });

const DatasetName: Param = { name: "name", in: "path", required: true, schema: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_DATASET_NAME)) };

const NewDataset = Schema.Struct({
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_DATASET_NAME)),
  description: Schema.optional(Schema.String.pipe(Schema.maxLength(MAX_DATASET_DESCRIPTION))),
  input_schema: Schema.optional(JsonSchema),
  expected_output_schema: Schema.optional(JsonSchema),
}).annotations({ identifier: "NewDataset" });

const DatasetChange = Schema.Struct({
  description: Schema.optional(Schema.String.pipe(Schema.maxLength(MAX_DATASET_DESCRIPTION))),
  input_schema: Schema.optional(JsonSchema),
  expected_output_schema: Schema.optional(JsonSchema),
}).annotations({ identifier: "DatasetChange" });

const Items = Schema.Struct({ items: Schema.Array(ItemInput.annotations({ identifier: "DatasetItemInput" })).pipe(Schema.minItems(1), Schema.maxItems(10_000)) })
  .annotations({ identifier: "DatasetItems", description: "Upserted by id (generated when absent) as one new version; all or nothing." });

const Written = Schema.Struct({ version: Count, ids: Schema.Array(Schema.String), changed: Count })
  .annotations({ identifier: "DatasetWrite", description: "The version after the write (unchanged when no item changed) and each item's id, in order." });

const Columns = (part: string) => q(part, Schema.String, `CSV: the column(s), comma-separated, that make the item's ${part}.`);

export const DATASET_OPERATIONS: Operations = {
  "/api/datasets": {
    post: { tag: "Datasets", summary: "Create a dataset", body: NewDataset, ok: { 201: Schema.Struct({ dataset: Dataset }) }, errors: [400, 401, 403, 409, 413, 415, 422, 429] },
    get: { tag: "Datasets", summary: "The project's datasets", ok: { 200: Schema.Struct({ datasets: Schema.Array(Dataset) }) }, errors: [401, 403, 429] },
  },
  "/api/datasets/{name}": {
    patch: {
      tag: "Datasets", summary: "Change a dataset's description or its items' JSON Schemas", params: [DatasetName],
      description: "A schema (JSON Schema 2020-12; null removes it) must fit every current active item: the first that does not is named and nothing changes. Regular expressions, uniqueItems and references to other documents are refused.",
      // 405: an empty name is the list's path (/api/datasets/), which is not changed by PATCH.
      body: DatasetChange, ok: { 200: Schema.Struct({ dataset: Dataset }) }, errors: [400, 401, 403, 404, 405, 413, 415, 422, 429],
    },
    get: { tag: "Datasets", summary: "A dataset and its versions, newest first", params: [DatasetName], ok: { 200: Schema.Struct({ dataset: Dataset, versions: Schema.Array(DatasetVersion) }) }, errors: [401, 403, 404, 429] },
  },
  "/api/datasets/{name}/items": {
    post: { tag: "Datasets", summary: "Add or update items (one new version)", params: [DatasetName], body: Items, ok: { 201: Written }, errors: [400, 401, 403, 404, 413, 415, 422, 429] },
    get: {
      tag: "Datasets", summary: "The items of a version, by id",
      params: [DatasetName, q("version", Count, "Default: the current version."), q("status", Schema.Literal(...ITEM_STATUSES)),
        q("after", Schema.String.pipe(Schema.maxLength(MAX_ITEM_ID)), "`next_after` of the previous page."), q("limit", Limit(1000, 100))],
      ok: { 200: Schema.Struct({ version: Count, items: Schema.Array(DatasetItem), next_after: Schema.NullOr(Schema.String) }).annotations({ identifier: "DatasetItemsPage" }) },
      errors: [401, 403, 404, 422, 429],
    },
  },
  "/api/datasets/{name}/import": {
    post: {
      tag: "Datasets", summary: "Import a CSV or JSON Lines file (one new version)",
      description: "JSON Lines: one item object per line. CSV: a header row; `input` defaults to a column named input, else every column not mapped to id, expected_output (or expected) and metadata. A file with bad lines is refused whole: `error.lines` lists them. A file past a bound — 10,000 items, 1,000 CSV columns, a CSV record with more fields than its header, 2 MiB per line — is refused (422) where it passes it, the rest unread.",
      params: [DatasetName, Columns("input"), Columns("expected_output"), Columns("metadata"), q("id", Schema.String, "CSV: the column with each item's id.")],
      body: Schema.String, bodyTypes: ["text/csv", "application/x-ndjson"],
      ok: { 201: Schema.Struct({ version: Count, imported: Count, changed: Count }).annotations({ identifier: "DatasetImport" }) },
      errors: [400, 401, 403, 404, 413, 415, 422, 429],
    },
  },
};

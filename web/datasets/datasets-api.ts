/**
 * Datasets API (Bearer key with scope read+ingest, the read API's rate-limit bucket; docs/EVALUATION.md):
 *
 *   POST /api/datasets {name, description?}                → 201 {dataset}; 409 name_taken
 *   GET  /api/datasets                                     → {datasets: [...]}
 *   GET  /api/datasets/{name}                              → {dataset, versions: [...]}
 *   PATCH /api/datasets/{name} {description?, input_schema?, expected_output_schema?} → {dataset}; 422 naming an item that does not fit
 *   POST /api/datasets/{name}/items {items: [...]}         → 201 {version, ids, changed}; 422 naming items[i].field
 *   GET  /api/datasets/{name}/items?version&status&limit&after → {version, items, next_after}
 *   POST /api/datasets/{name}/import?input&expected_output&metadata&id  (text/csv or application/x-ndjson)
 *                                                          → 201 {version, imported, changed}; 422 with the bad lines
 *
 * A dataset is the key's project's: another project's name is a 404 like a name that does not exist.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { ValidationError } from "../../core/errors.js";
import { MAX_POSTGRES_INTEGER } from "../../core/ports/sql.js";
import * as store from "../../stores/datasets/datasets.js";
import { importFormatOf, readImport, type ColumnMapping } from "../../stores/datasets/import.js";
import { isItemId, ITEM_STATUSES, parseItemsBody, type ItemStatus } from "../../stores/datasets/items.js";
import type { WebDeps } from "../deps.js";
import { HttpProblem } from "../http-errors.js";
import { readJsonBody } from "../json-body.js";
import { readUpload } from "../upload-body.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { intParam, keyPrincipalOf, readAuthorizer, stringParam } from "../api/read-api.js";
import { mountApi } from "../route-table.js";

/** A name, a description and two JSON Schemas of up to 64 KiB each. */
const DATASET_BODY_LIMIT = 256 * 1024;
/** Items and uploads: up to 10,000 items of up to 1 MiB each would not fit; this is what one request may carry. */
const ITEMS_BODY_LIMIT = 32 * 1024 * 1024;
const DEFAULT_ITEMS_PAGE = 100;
const MAX_ITEMS_PAGE = 1_000;

/** A comma-separated list of CSV columns in a query parameter. */
function columnsParam(ctx: Context, name: string): string[] | undefined {
  const raw = stringParam(ctx, name);
  return raw === undefined ? undefined : raw.split(",").map((c) => c.trim()).filter(Boolean);
}

function afterParam(ctx: Context): string | undefined {
  const after = stringParam(ctx, "after");
  if (after !== undefined && !isItemId(after)) {
    throw new ValidationError({ field: "after", message: "after must be an item id (the next_after of the previous page)" });
  }
  return after;
}

export function registerDatasetsApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  const authorize = readAuthorizer(deps, auth);
  mountApi(router, deps, authorize, {
    edit_datasets: {
      "POST /api/datasets": createDataset,
      "PATCH /api/datasets/:name": updateDataset,
      "POST /api/datasets/:name/items": addItems,
      "POST /api/datasets/:name/import": importItems,
    },
    read: {
      "GET /api/datasets": getDatasets,
      "GET /api/datasets/:name": getDataset,
      "GET /api/datasets/:name/items": getItems,
    },
  });
}

async function createDataset(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const body = (await readJsonBody(ctx, DATASET_BODY_LIMIT)) as store.DatasetFields | null;
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ValidationError({ message: 'the body must be a JSON object like {"name": "support questions"}' });
  }
  const dataset = await store.createDataset(deps.ports.sql, p.projectId, body, p.userId);
  ctx.status = 201;
  ctx.body = { dataset };
}

async function getDatasets(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  ctx.set("Cache-Control", "no-store");
  ctx.body = { datasets: await store.listDatasets(deps.ports.sql, p.projectId) };
}

async function getDataset(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const dataset = await store.datasetNamed(deps.ports.sql, p.projectId, ctx.params.name!);
  ctx.set("Cache-Control", "no-store");
  ctx.body = { dataset, versions: await store.datasetVersions(deps.ports.sql, dataset.id) };
}

async function updateDataset(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const body = (await readJsonBody(ctx, DATASET_BODY_LIMIT)) as store.DatasetFields | null;
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ValidationError({ message: 'the body must be a JSON object like {"input_schema": {"type": "object"}}' });
  }
  ctx.body = { dataset: await store.updateDataset(deps.ports.sql, p.projectId, ctx.params.name!, body) };
}

async function addItems(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  await store.datasetNamed(deps.ports.sql, p.projectId, ctx.params.name!);
  const items = parseItemsBody(await readJsonBody(ctx, ITEMS_BODY_LIMIT, { unstorable: "repair" }));
  const written = await store.writeItems(deps.ports.sql, p.projectId, ctx.params.name!, items, "items", p.userId);
  ctx.status = 201;
  ctx.body = written;
}

async function getItems(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const dataset = await store.datasetNamed(deps.ports.sql, p.projectId, ctx.params.name!);
  const status = stringParam(ctx, "status");
  if (status !== undefined && !(ITEM_STATUSES as readonly string[]).includes(status)) {
    throw new ValidationError({ field: "status", message: "status must be active or archived" });
  }
  const page = await store.readItems(deps.ports.sql, dataset, {
    version: intParam(ctx, "version", 0, MAX_POSTGRES_INTEGER),
    limit: intParam(ctx, "limit", 1, MAX_ITEMS_PAGE) ?? DEFAULT_ITEMS_PAGE,
    after: afterParam(ctx),
    status: status as ItemStatus | undefined,
  });
  ctx.set("Cache-Control", "no-store");
  ctx.body = page;
}

/** A CSV or JSON Lines file as the body, its columns mapped by the query string. */
async function importItems(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  await store.datasetNamed(deps.ports.sql, p.projectId, ctx.params.name!);
  const format = importFormatOf(ctx.req.headers["content-type"]);
  if (!format) throw new HttpProblem(415, "unsupported_media_type", "send the file as text/csv or application/x-ndjson (JSON Lines)");
  const mapping: ColumnMapping = {
    id: stringParam(ctx, "id"),
    input: columnsParam(ctx, "input"),
    expected_output: columnsParam(ctx, "expected_output"),
    metadata: columnsParam(ctx, "metadata"),
  };
  const items = await readUpload(ctx, ITEMS_BODY_LIMIT, `the file exceeds the limit of ${ITEMS_BODY_LIMIT} bytes`, (file) => readImport(format, file, mapping));
  const written = await store.writeItems(deps.ports.sql, p.projectId, ctx.params.name!, items, "import", p.userId);
  ctx.status = 201;
  ctx.body = { version: written.version, imported: items.length, changed: written.changed };
}

/**
 * Datasets of a project and their versions (Postgres migration 106; docs/EVALUATION.md). A write of items is one
 * transaction that makes one new version: items whose content changed get a new revision valid from it, the
 * revisions they replace end there, and unchanged items cost nothing. A write that changes nothing makes no
 * version. Any version reads back as the revisions that span it.
 */
import { Conflict, NotFound, ValidationError } from "../../core/errors.js";
import { displayTextProblem } from "../../core/display-text.js";
import { refuseUnstorableSetting } from "../../core/storable-setting.js";
import type { Sql } from "../../core/ports/sql.js";
import { canonicalJson, type ItemSource, type ItemStatus, type NewItem } from "./items.js";
import { checkItemsAgainst, SCHEMA_PARTS, validatorOf, type ItemSchemas, type SchemaPart } from "./item-schemas.js";

export const MAX_DATASET_NAME = 200;
export const MAX_DATASET_DESCRIPTION = 2_000;
/** Most datasets a project may hold. */
export const MAX_DATASETS = 1_000;

export interface Dataset {
  readonly id: number;
  readonly name: string;
  readonly description: string;
  /** JSON Schemas its items' input and expected output must match (item-schemas.ts); null for none. */
  readonly input_schema: unknown;
  readonly expected_output_schema: unknown;
  readonly version: number;
  readonly item_count: number;
  readonly created_at: string;
  readonly updated_at: string;
}

export interface DatasetVersion {
  readonly version: number;
  readonly change: string;
  readonly changed: number;
  readonly item_count: number;
  readonly created_by: string | null;
  readonly created_at: string;
}

/** An item as a version holds it. */
export interface DatasetItem extends NewItem {
  /** The version that wrote this revision of the item. */
  readonly version: number;
  readonly created_at: string;
}

const iso = (v: unknown) => new Date(v as string).toISOString();

/** Checks a dataset's name: 1 to 200 characters, none of them control characters. */
export function checkDatasetName(name: unknown): string {
  const trimmed = typeof name === "string" ? name.trim() : "";
  if (!trimmed) throw new ValidationError({ field: "name", message: "name is required (1 to 200 characters)" });
  if (trimmed.length > MAX_DATASET_NAME) throw new ValidationError({ field: "name", message: `name is longer than ${MAX_DATASET_NAME} characters` });
  const problem = displayTextProblem(trimmed);
  if (problem) throw new ValidationError({ field: "name", message: `name ${problem}` });
  return trimmed;
}

function checkDescription(description: unknown): string {
  if (description === undefined || description === null) return "";
  if (typeof description !== "string") throw new ValidationError({ field: "description", message: "description must be a string" });
  if (description.length > MAX_DATASET_DESCRIPTION) {
    throw new ValidationError({ field: "description", message: `description is longer than ${MAX_DATASET_DESCRIPTION} characters` });
  }
  refuseUnstorableSetting(description, "description");
  return description;
}

const DATASET_COLUMNS = `d.id, d.name, d.description, d.input_schema, d.expected_output_schema, d.version, d.created_at, d.updated_at,
  (SELECT count(*)::int FROM dataset_items i WHERE i.dataset_id = d.id AND i.to_version IS NULL AND i.status = 'active') AS item_count`;

const toDataset = (r: Record<string, unknown>): Dataset => ({
  id: Number(r.id),
  name: String(r.name),
  description: String(r.description),
  input_schema: r.input_schema ?? null,
  expected_output_schema: r.expected_output_schema ?? null,
  version: Number(r.version),
  item_count: Number(r.item_count),
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

export interface DatasetFields {
  name?: unknown;
  description?: unknown;
  input_schema?: unknown;
  expected_output_schema?: unknown;
}

/** A schema field as given: undefined when absent, null to have none, else a checked JSON Schema. */
function schemaField(fields: DatasetFields, part: SchemaPart): unknown {
  const v = fields[part];
  if (v === undefined || v === null) return v;
  validatorOf(v, part);
  return v;
}

export async function createDataset(sql: Sql, projectId: number, input: DatasetFields, createdBy: number | null): Promise<Dataset> {
  const name = checkDatasetName(input.name);
  const description = checkDescription(input.description);
  const [inputSchema, expectedSchema] = SCHEMA_PARTS.map((part) => schemaField(input, part) ?? null);
  return sql.transaction(async (tx) => {
    const [count] = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM datasets WHERE project_id = $1", [projectId]);
    if (Number(count?.n ?? 0) >= MAX_DATASETS) {
      throw new Conflict({ code: "limit", message: `a project may hold at most ${MAX_DATASETS} datasets`, field: "name" });
    }
    const rows = await tx.query<{ id: unknown }>(
      `INSERT INTO datasets (project_id, name, description, input_schema, expected_output_schema, created_by) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (project_id, name) DO NOTHING RETURNING id`,
      [projectId, name, description, jsonOrNull(inputSchema), jsonOrNull(expectedSchema), createdBy],
    );
    if (!rows[0]) throw new Conflict({ code: "name_taken", message: `the project already has a dataset named ${JSON.stringify(name)}`, field: "name" });
    return (await findDataset(tx, projectId, name))!;
  });
}

const jsonOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v));

/**
 * Changes a dataset's description or schemas (null removes a schema). A schema must fit the current active items:
 * the first that does not is named and nothing changes.
 */
export async function updateDataset(sql: Sql, projectId: number, name: string, fields: DatasetFields): Promise<Dataset> {
  const description = fields.description === undefined ? undefined : checkDescription(fields.description);
  const schemas = Object.fromEntries(SCHEMA_PARTS.map((part) => [part, schemaField(fields, part)])) as Record<SchemaPart, unknown>;
  return sql.transaction(async (tx) => {
    const dataset = await datasetNamed(tx, projectId, name);
    await tx.query("SELECT id FROM datasets WHERE id = $1 FOR UPDATE", [dataset.id]);
    const next = {
      input_schema: schemas.input_schema === undefined ? dataset.input_schema : schemas.input_schema,
      expected_output_schema: schemas.expected_output_schema === undefined ? dataset.expected_output_schema : schemas.expected_output_schema,
    };
    for (let after = ""; ; ) {
      const page = await readItems(tx, dataset, { limit: 1_000, after: after || undefined, status: "active" });
      checkItemsAgainst(next, page.items, (i) => `item ${JSON.stringify(page.items[i]!.id)}`);
      if (!page.next_after) break;
      after = page.next_after;
    }
    await tx.query(
      `UPDATE datasets SET description = coalesce($2, description), input_schema = $3, expected_output_schema = $4, updated_at = now() WHERE id = $1`,
      [dataset.id, description ?? null, jsonOrNull(next.input_schema), jsonOrNull(next.expected_output_schema)],
    );
    return (await findDataset(tx, projectId, dataset.name))!;
  });
}

export async function listDatasets(sql: Sql, projectId: number): Promise<Dataset[]> {
  const rows = await sql.query(`SELECT ${DATASET_COLUMNS} FROM datasets d WHERE d.project_id = $1 ORDER BY lower(d.name), d.id`, [projectId]);
  return rows.map(toDataset);
}

export async function findDataset(sql: Sql, projectId: number, name: string): Promise<Dataset | undefined> {
  if (displayTextProblem(name)) return undefined;
  const rows = await sql.query(`SELECT ${DATASET_COLUMNS} FROM datasets d WHERE d.project_id = $1 AND d.name = $2`, [projectId, name]);
  return rows[0] ? toDataset(rows[0]) : undefined;
}

/** The project's dataset named `name`; NotFound (404) for another project's or none. */
export async function datasetNamed(sql: Sql, projectId: number, name: string): Promise<Dataset> {
  const found = await findDataset(sql, projectId, name);
  if (!found) throw new NotFound({ resource: "dataset", message: `no dataset named ${JSON.stringify(name)} in this project` });
  return found;
}

export async function datasetVersions(sql: Sql, datasetId: number): Promise<DatasetVersion[]> {
  const rows = await sql.query(
    `SELECT v.version, v.change, v.changed, v.item_count, u.email AS created_by, v.created_at
     FROM dataset_versions v LEFT JOIN users u ON u.id = v.created_by WHERE v.dataset_id = $1 ORDER BY v.version DESC`,
    [datasetId],
  );
  return rows.map((r) => ({
    version: Number(r.version), change: String(r.change), changed: Number(r.changed), item_count: Number(r.item_count),
    created_by: r.created_by === null ? null : String(r.created_by), created_at: iso(r.created_at),
  }));
}

/** What changed items a write stores, in the shape jsonb_to_recordset reads. */
const revisionRows = (items: readonly NewItem[]) =>
  JSON.stringify(items.map((i) => ({
    item_id: i.id, input: i.input, expected_output: i.expected_output, metadata: i.metadata, source: i.source,
    source_sdk_run_id: i.source_sdk_run_id, source_span_id: i.source_span_id, status: i.status,
  })));

const contentOf = (i: { input: unknown; expected_output: unknown; metadata: unknown; source: unknown; source_sdk_run_id: unknown; source_span_id: unknown; status: unknown }) =>
  canonicalJson([i.input, i.expected_output ?? null, i.metadata ?? {}, i.source, i.source_sdk_run_id ?? null, i.source_span_id ?? null, i.status]);

export interface WriteResult {
  /** The dataset's version after the write (unchanged when nothing changed). */
  readonly version: number;
  readonly ids: string[];
  readonly changed: number;
}

/**
 * Upserts items by id into the project's dataset `name` as one new version (`change` says what made it). All or
 * nothing: the items were validated before, and the transaction holds the dataset's row, so concurrent writes
 * make consecutive versions.
 */
export async function writeItems(
  sql: Sql, projectId: number, name: string, items: readonly NewItem[], change: string, createdBy: number | null,
): Promise<WriteResult> {
  return sql.transaction(async (tx) => {
    const [ds] = await tx.query<{ id: unknown; version: unknown; input_schema: unknown; expected_output_schema: unknown }>(
      "SELECT id, version, input_schema, expected_output_schema FROM datasets WHERE project_id = $1 AND name = $2 FOR UPDATE",
      [projectId, displayTextProblem(name) ? "" : name],
    );
    if (!ds) throw new NotFound({ resource: "dataset", message: `no dataset named ${JSON.stringify(name)} in this project` });
    checkItemsAgainst(ds as ItemSchemas, items);
    const datasetId = Number(ds.id);
    const ids = items.map((i) => i.id);
    const current = await tx.query<Record<string, unknown>>(
      `SELECT item_id, input, expected_output, metadata, source, source_sdk_run_id, source_span_id, status
       FROM dataset_items WHERE dataset_id = $1 AND to_version IS NULL AND item_id = ANY($2::text[])`,
      [datasetId, ids],
    );
    const before = new Map(current.map((r) => [String(r.item_id), contentOf(r as Parameters<typeof contentOf>[0])]));
    const changed = items.filter((i) => before.get(i.id) !== contentOf(i));
    if (changed.length === 0) return { version: Number(ds.version), ids, changed: 0 };
    const version = Number(ds.version) + 1;
    await tx.query(
      "UPDATE dataset_items SET to_version = $2 WHERE dataset_id = $1 AND to_version IS NULL AND item_id = ANY($3::text[])",
      [datasetId, version, changed.map((i) => i.id)],
    );
    await tx.query(
      `INSERT INTO dataset_items (dataset_id, item_id, from_version, input, expected_output, metadata, source, source_sdk_run_id, source_span_id, status)
       SELECT $1, x.item_id, $2, x.input, x.expected_output, coalesce(x.metadata, '{}'), x.source, x.source_sdk_run_id, x.source_span_id, x.status
       FROM jsonb_to_recordset($3::jsonb) AS x(item_id text, input jsonb, expected_output jsonb, metadata jsonb, source text,
                                               source_sdk_run_id text, source_span_id text, status text)`,
      [datasetId, version, revisionRows(changed)],
    );
    const [count] = await tx.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM dataset_items WHERE dataset_id = $1 AND to_version IS NULL AND status = 'active'", [datasetId],
    );
    await tx.query("UPDATE datasets SET version = $2, updated_at = now() WHERE id = $1", [datasetId, version]);
    await tx.query(
      "INSERT INTO dataset_versions (dataset_id, version, change, changed, item_count, created_by) VALUES ($1, $2, $3, $4, $5, $6)",
      [datasetId, version, change, changed.length, Number(count?.n ?? 0), createdBy],
    );
    return { version, ids, changed: changed.length };
  });
}

/** The items `ids` of a dataset as they were at `version`, by id (the ones that version does not hold are left out). */
export async function readItemsWithIds(sql: Sql, dataset: Dataset, version: number, ids: readonly string[]): Promise<DatasetItem[]> {
  if (ids.length === 0) return [];
  const rows = await sql.query<Record<string, unknown>>(
    `SELECT ${ITEM_COLUMNS} FROM dataset_items
     WHERE dataset_id = $1 AND from_version <= $2 AND (to_version IS NULL OR to_version > $2) AND item_id = ANY($3::text[])
     ORDER BY item_id COLLATE "C"`,
    [dataset.id, version, ids],
  );
  return rows.map(toItem);
}

export interface ItemsPage {
  readonly version: number;
  readonly items: DatasetItem[];
  /** The item id to pass as `after` for the next page; null on the last. */
  readonly next_after: string | null;
}

/**
 * The items of a dataset as they were at `version` (default: the current one), by id (in byte order, the same in
 * both modes), a page of at most `limit`
 * after the item id `after`; `status` keeps only active or archived ones. NotFound for a version that never was.
 */
export async function readItems(
  sql: Sql, dataset: Dataset, opts: { version?: number; limit: number; after?: string; status?: ItemStatus },
): Promise<ItemsPage> {
  const version = opts.version ?? dataset.version;
  if (version > dataset.version || version < 0) {
    throw new NotFound({ resource: "version", message: `dataset ${JSON.stringify(dataset.name)} has versions 1 to ${dataset.version}; there is no version ${version}` });
  }
  const rows = await sql.query<Record<string, unknown>>(
    `SELECT ${ITEM_COLUMNS}
     FROM dataset_items
     WHERE dataset_id = $1 AND from_version <= $2 AND (to_version IS NULL OR to_version > $2)
       AND item_id COLLATE "C" > $3 AND ($4::text IS NULL OR status = $4)
     ORDER BY item_id COLLATE "C" LIMIT $5`,
    [dataset.id, version, opts.after ?? "", opts.status ?? null, opts.limit + 1],
  );
  const items = rows.slice(0, opts.limit).map(toItem);
  return { version, items, next_after: rows.length > opts.limit ? items[items.length - 1]!.id : null };
}

const ITEM_COLUMNS = "item_id, input, expected_output, metadata, source, source_sdk_run_id, source_span_id, status, from_version, created_at";

const toItem = (r: Record<string, unknown>): DatasetItem => ({
  id: String(r.item_id),
  input: r.input,
  expected_output: r.expected_output ?? null,
  metadata: (r.metadata ?? {}) as Record<string, unknown>,
  source: r.source as ItemSource,
  source_sdk_run_id: (r.source_sdk_run_id as string | null) ?? null,
  source_span_id: (r.source_span_id as string | null) ?? null,
  status: r.status as ItemStatus,
  version: Number(r.from_version),
  created_at: iso(r.created_at),
});

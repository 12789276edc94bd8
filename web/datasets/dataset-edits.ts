/**
 * Changing a dataset from its page (docs/EVALUATION.md), beside the forms of datasets.ts:
 *
 *   POST /datasets/:name/settings       description, and the JSON Schemas of its items' input and expected output
 *                                       (empty: none); a schema the current items do not fit is refused, naming one
 *   POST /datasets/:name/items/status   archive or restore an item (id, status): a new version
 *   POST /datasets/:name/upload         a CSV or JSON Lines file as the body (the page's file picker sends it with
 *                                       the X-CSRF-Token header): JSON {version, imported, changed}, or the API's
 *                                       422 with the bad lines
 *
 * All need `edit_datasets` (core/access/roles.ts).
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { NotFound, ValidationError } from "../../core/errors.js";
import { datasetNamed, readItemsWithIds, updateDataset, writeItems } from "../../stores/datasets/datasets.js";
import { importFormatOf, readImport } from "../../stores/datasets/import.js";
import { isItemId, ITEM_STATUSES, type ItemStatus } from "../../stores/datasets/items.js";
import { projectOfRequest } from "../auth/project.js";
import type { SessionUser, WebDeps } from "../deps.js";
import { formAction, readForm, redirectAfterPost } from "../forms.js";
import { HttpProblem } from "../http-errors.js";
import { readUpload } from "../upload-body.js";
import { mountPages } from "../route-table.js";

/** The largest file the page uploads (the import API's limit). */
const UPLOAD_LIMIT = 32 * 1024 * 1024;
const datasetPath = (name: string) => `/datasets/${encodeURIComponent(name)}`;
const userOf = (ctx: Context) => (ctx.state.user as SessionUser).id;

/** The dataset's page, showing a refused form again (web/datasets/datasets-page.ts). */
type ShowDataset = (ctx: Context, extra: Record<string, unknown>, status: number) => Promise<void>;

/** A schema typed into a textarea: empty means none; otherwise it must be JSON. */
function schemaText(text: string | undefined, field: string): unknown {
  if (text === undefined || text.trim() === "") return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new ValidationError({ field, message: `${field} must be JSON (a JSON Schema object), or empty for none` });
  }
}

export function registerDatasetEditsPage(router: Router, deps: WebDeps, showDataset: ShowDataset): void {
  mountPages(router, deps, {
    edit_datasets: {
      "POST /datasets/:name/settings": (ctx: Context) => saveSettings(ctx, deps, showDataset),
      "POST /datasets/:name/items/status": setItemStatus,
      "POST /datasets/:name/upload": uploadItems,
    },
  });
}

async function saveSettings(ctx: Context, deps: WebDeps, showDataset: ShowDataset): Promise<void> {
  const form = await readForm(ctx);
  const name = String(ctx.params.name);
  await formAction({
    refuses: ["ValidationError"],
    field: "input_schema",
    run: async () => {
      await updateDataset(deps.ports.sql, projectOfRequest(ctx).id, name, {
        description: form.description ?? "",
        input_schema: schemaText(form.input_schema, "input_schema"),
        expected_output_schema: schemaText(form.expected_output_schema, "expected_output_schema"),
      });
      redirectAfterPost(ctx, datasetPath(name), "Settings saved.");
    },
    refused: (r) => showDataset(ctx, { settings_values: form, settings_errors: { [r.field]: r.message }, open_settings: true }, r.status),
  });
}

/** Archives or restores one item: a new version. */
async function setItemStatus(ctx: Context, deps: WebDeps): Promise<void> {
  const { sql } = deps.ports;
  const form = await readForm(ctx);
  const project = projectOfRequest(ctx);
  const name = String(ctx.params.name);
  const dataset = await datasetNamed(sql, project.id, name);
  const status = form.status as ItemStatus;
  if (!(ITEM_STATUSES as readonly string[]).includes(status)) throw new ValidationError({ field: "status", message: "status must be active or archived" });
  const id = form.id ?? "";
  const [item] = isItemId(id) ? await readItemsWithIds(sql, dataset, dataset.version, [id]) : [];
  if (!item) throw new NotFound({ resource: "item", message: `dataset ${JSON.stringify(name)} has no item ${JSON.stringify(id)}` });
  const { version, changed } = await writeItems(sql, project.id, name, [{ ...item, status }], status === "archived" ? "archive" : "restore", userOf(ctx));
  redirectAfterPost(ctx, datasetPath(name), changed ? `Item ${id} ${status === "archived" ? "archived" : "restored"} in version ${version}.` : "Nothing changed: no new version.");
}

async function uploadItems(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  const name = String(ctx.params.name);
  await datasetNamed(deps.ports.sql, project.id, name);
  const format = importFormatOf(ctx.req.headers["content-type"]);
  if (!format) throw new HttpProblem(415, "unsupported_media_type", "send the file as text/csv or application/x-ndjson (JSON Lines)");
  const columns = (v: unknown) => (typeof v === "string" && v.trim() ? v.split(",").map((c) => c.trim()).filter(Boolean) : undefined);
  const mapping = { input: columns(ctx.query.input), expected_output: columns(ctx.query.expected_output) };
  const items = await readUpload(ctx, UPLOAD_LIMIT, `the file exceeds the limit of ${UPLOAD_LIMIT} bytes`, (file) => readImport(format, file, mapping));
  // The page's script sends Accept: application/json, so a refusal comes back as the API's JSON (web/app.ts).
  const written = await writeItems(deps.ports.sql, project.id, name, items, "import", userOf(ctx));
  ctx.status = 201;
  ctx.body = { version: written.version, imported: items.length, changed: written.changed };
}

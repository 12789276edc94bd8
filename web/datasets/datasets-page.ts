/**
 * The dashboard's datasets (docs/EVALUATION.md):
 *
 *   GET  /datasets                      the project's datasets; POST /datasets creates one
 *   GET  /datasets/:name?version=N      its items at a version (default the current), its versions, forms to add
 *   POST /datasets/:name/items          one item typed in (input, expected output: JSON, or text)
 *   POST /datasets/:name/import         pasted JSON Lines or CSV (the same checks as the API's import)
 *   POST /datasets/add-runs             the dashboard's selected runs (sdk_run_id, repeated): each run's input, its
 *                                       output as the expected output
 *   POST /datasets/add-run              "Add to dataset" on a run page: the run's (or one span's: span_id) input, the
 *                                       expected output edited
 *
 * Reads need `read`, writes `edit_datasets` (core/access/roles.ts).
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { NotFound, ValidationError } from "../../core/errors.js";
import * as store from "../../stores/datasets/datasets.js";
import { readImport } from "../../stores/datasets/import.js";
import { isItemId, parseItem, type NewItem } from "../../stores/datasets/items.js";
import { runAsItem } from "../../stores/datasets/run-items.js";
import type { RunRecord } from "../../core/events/run.js";
import { projectOfRequest } from "../auth/project.js";
import type { SessionUser, WebDeps } from "../deps.js";
import { formAction, readForm, redirectAfterPost, selectedRunIds } from "../forms.js";
import { queryParam, renderPage } from "../common/render.js";
import { registerDatasetEditsPage } from "./dataset-edits.js";
import { mountPages } from "../route-table.js";

const ITEMS_PER_PAGE = 100;
/** Most runs one "Add to dataset" of the dashboard's selection takes. */
const MAX_RUNS_PER_ADD = 500;
const datasetPath = (name: string) => `/datasets/${encodeURIComponent(name)}`;
const userOf = (ctx: Context) => (ctx.state.user as SessionUser).id;

export function registerDatasetsPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: { "GET /datasets": datasetsPage },
    edit_datasets: { "POST /datasets": createDataset },
  });
  registerDatasetEditsPage(router, deps, (ctx, extra, status) => datasetPage(ctx, deps, extra, status));
  mountPages(router, deps, {
    read: { "GET /datasets/:name": datasetPage },
    edit_datasets: {
      "POST /datasets/:name/items": addItem,
      "POST /datasets/:name/import": importItems,
      "POST /datasets/add-runs": addSelectedRuns,
      "POST /datasets/add-run": addRun,
    },
  });
}

async function datasetsPage(ctx: Context, deps: WebDeps, extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const datasets = await store.listDatasets(deps.ports.sql, projectOfRequest(ctx).id);
  renderPage(ctx, "datasets.njk", { title: "Datasets", datasets, values: {}, errors: {}, ...extra }, status);
}

async function createDataset(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  await formAction({
    refuses: ["ValidationError", "Conflict"],
    run: async () => {
      const dataset = await store.createDataset(deps.ports.sql, projectOfRequest(ctx).id, form, userOf(ctx));
      redirectAfterPost(ctx, datasetPath(dataset.name));
    },
    refused: (r) => datasetsPage(ctx, deps, { values: form, errors: { [r.field]: r.message }, open_form: true }, r.status),
  });
}

async function datasetPage(ctx: Context, deps: WebDeps, extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const { sql } = deps.ports;
  const dataset = await store.datasetNamed(sql, projectOfRequest(ctx).id, String(ctx.params.name));
  const asked = Number(queryParam(ctx, "version"));
  const version = Number.isInteger(asked) && asked >= 1 && asked <= dataset.version ? asked : dataset.version;
  const after = queryParam(ctx, "after");
  const [page, versions] = await Promise.all([
    store.readItems(sql, dataset, { version, limit: ITEMS_PER_PAGE, after: after && isItemId(after) ? after : undefined }),
    store.datasetVersions(sql, dataset.id),
  ]);
  // ?edit=<id>: the add form prefilled with that item, to change it as a new version.
  const editId = queryParam(ctx, "edit");
  const [editing] = editId && isItemId(editId) ? await store.readItemsWithIds(sql, dataset, dataset.version, [editId]) : [];
  const pretty = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v, null, 2));
  const values = editing ? { id: editing.id, input: pretty(editing.input), expected_output: editing.expected_output === null ? "" : pretty(editing.expected_output) } : {};
  const schemaOf = (v: unknown) => (v === null ? "" : JSON.stringify(v, null, 2));
  renderPage(ctx, "dataset.njk", {
    title: `Dataset ${dataset.name}`, dataset, page, versions, version, errors: {}, values, editing: Boolean(editing),
    settings_values: { description: dataset.description, input_schema: schemaOf(dataset.input_schema), expected_output_schema: schemaOf(dataset.expected_output_schema) },
    settings_errors: {}, flash: queryParam(ctx, "flash"), ...extra,
  }, status);
}

/** One item typed in: its input and expected output, each JSON or text. */
async function addItem(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  const name = String(ctx.params.name);
  await store.datasetNamed(deps.ports.sql, projectOfRequest(ctx).id, name);
  await writeFromForm(ctx, deps, name, form, () => [parseItem({
    ...(form.id?.trim() ? { id: form.id.trim() } : {}),
    input: jsonOrText(form.input),
    ...(form.expected_output?.trim() ? { expected_output: jsonOrText(form.expected_output) } : {}),
  }, "item", "manual")], "edit");
}

/** Pasted JSON Lines or CSV, with the same checks as the API's import. */
async function importItems(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  const name = String(ctx.params.name);
  await store.datasetNamed(deps.ports.sql, projectOfRequest(ctx).id, name);
  const columns = (v: string | undefined) => (v?.trim() ? v.split(",").map((c) => c.trim()).filter(Boolean) : undefined);
  await writeFromForm(ctx, deps, name, form, () => readImport(form.format === "csv" ? "csv" : "jsonl", form.file ?? "", { input: columns(form.input_columns), expected_output: columns(form.expected_columns) }), "import");
}

/** The dashboard's selected runs: each run's input, its output as the expected output. */
async function addSelectedRuns(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  const project = projectOfRequest(ctx);
  const ids = selectedRunIds(ctx);
  if (ids.length > MAX_RUNS_PER_ADD) throw new ValidationError({ field: "sdk_run_id", message: `add at most ${MAX_RUNS_PER_ADD} runs at once` });
  const name = form.dataset ?? "";
  await store.datasetNamed(deps.ports.sql, project.id, name);
  const runs: RunRecord[] = [];
  for (const id of ids) {
    const run = await deps.events.getRun(project.id, id);
    if (!run) throw new NotFound({ resource: "run", message: `There is no run ${JSON.stringify(id)} in ${project.name}.` });
    runs.push(run);
  }
  ctx.params.name = name;
  await writeFromForm(ctx, deps, name, form, async () => {
    const items: NewItem[] = [];
    for (const [i, run] of runs.entries()) items.push(await runAsItem(deps.events, run, { expected: "output", place: `runs[${i}]` }));
    return items;
  }, "runs");
}

/** A run page's "Add to dataset": the run's (or one span's: span_id) input, the expected output edited. */
async function addRun(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  const project = projectOfRequest(ctx);
  const sdkRunId = form.sdk_run_id ?? "";
  const run = sdkRunId ? await deps.events.getRun(project.id, sdkRunId) : undefined;
  if (!run) throw new NotFound({ resource: "run", message: `There is no run ${JSON.stringify(sdkRunId)} in ${project.name}.` });
  const name = form.dataset ?? "";
  await store.datasetNamed(deps.ports.sql, project.id, name);
  // A refusal shows the dataset's page with the form as it was sent.
  ctx.params.name = name;
  // A span's input when the form names one of the run's spans, else the run's.
  const spanId = form.span_id?.trim() ? form.span_id.trim().slice(0, 64) : undefined;
  const expected = form.expected_output?.trim() ? { value: jsonOrText(form.expected_output) } : "none";
  await writeFromForm(ctx, deps, name, form, async () => [await runAsItem(deps.events, run, { spanId, expected, place: "item" })], spanId ? "span" : "run");
}

/** Writes items from a form and goes back to the dataset, or shows the form again with what is wrong. */
function writeFromForm(ctx: Context, deps: WebDeps, name: string, form: Record<string, string>, make: () => NewItem[] | Promise<NewItem[]>, change: string) {
  return formAction({
    refuses: ["ValidationError", "Conflict"],
    run: async () => {
      const items = await make();
      const { version, changed } = await store.writeItems(deps.ports.sql, projectOfRequest(ctx).id, name, items, change, userOf(ctx));
      redirectAfterPost(ctx, datasetPath(name), changed ? `Saved ${changed} item${changed === 1 ? "" : "s"} as version ${version}.` : "Nothing changed: no new version.");
    },
    refused: (r) => datasetPage(ctx, deps, { values: form, errors: { [r.field]: r.message }, error_lines: r.lines }, r.status),
  });
}

/** A form's JSON field: parsed when it is JSON, else the text itself; undefined when empty. */
function jsonOrText(text: string | undefined): unknown {
  if (text === undefined || text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

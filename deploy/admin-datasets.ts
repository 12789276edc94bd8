/**
 * The CLI's dataset commands (deploy/cli-datasets.ts → deploy/admin.ts), run by the instance's operator on a
 * project named by slug (or a user's personal project): export a version as JSON Lines or CSV, import a file as a
 * new version (the same checks as the API: a file with bad lines is refused whole, naming them).
 */
import { ValidationError } from "../core/errors.js";
import type { Sql } from "../core/ports/sql.js";
import { createDataset, datasetNamed, findDataset, readItems, writeItems, type DatasetItem } from "../stores/datasets/datasets.js";
import { EXPORT_FORMATS, exportItems, type ExportFormat } from "../stores/datasets/export.js";
import { readImport } from "../stores/datasets/import.js";
import { selectedProject, type ProjectSelection } from "./project-selection.js";

export type DatasetAdminRequest =
  | ({ cmd: "datasets.export"; name: string; version?: number; format?: string } & ProjectSelection)
  | ({ cmd: "datasets.import"; name: string; format?: string; text: string; create?: boolean } & ProjectSelection);

export type DatasetAdminResult =
  | { file: string; version: number; items: number }
  | { version: number; imported: number; changed: number; created: boolean };

const PAGE = 1_000;

function formatOf(format: string | undefined): ExportFormat {
  const f = format ?? "jsonl";
  if (!(EXPORT_FORMATS as readonly string[]).includes(f)) throw new ValidationError({ field: "format", message: "--format takes jsonl or csv" });
  return f as ExportFormat;
}

async function projectOf(sql: Sql, sel: ProjectSelection): Promise<number> {
  const id = await selectedProject(sql, sel);
  if (id === undefined) throw new ValidationError({ field: "project", message: "name the project: --project P, or --email E for E's personal project" });
  return id;
}

export async function runDatasetAdmin(sql: Sql, req: DatasetAdminRequest): Promise<DatasetAdminResult> {
  const projectId = await projectOf(sql, req);
  const format = formatOf(req.format);
  if (req.cmd === "datasets.export") {
    const dataset = await datasetNamed(sql, projectId, req.name);
    const items: DatasetItem[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await readItems(sql, dataset, { version: req.version, limit: PAGE, after });
      items.push(...page.items);
      if (!page.next_after) return { file: exportItems(items, format), version: page.version, items: items.length };
      after = page.next_after;
    }
  }
  // Checked before the dataset is made, so a refused file leaves nothing behind.
  const items = await readImport(format, req.text);
  const created = req.create === true && !(await findDataset(sql, projectId, req.name));
  if (created) await createDataset(sql, projectId, { name: req.name }, null);
  const { version, changed } = await writeItems(sql, projectId, req.name, items, "import", null);
  return { version, imported: items.length, changed, created };
}

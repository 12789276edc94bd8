/** list_datasets: the project's datasets (GET /api/datasets: stores/datasets/datasets.ts listDatasets). */
import { listDatasets } from "../../../stores/datasets/datasets.js";
import { defineTool } from "../tool.js";
import { cursorArg, limitArg, offsetPage } from "./args.js";

const MAX_DATASETS = 200;

export const listDatasetsTool = defineTool({
  name: "list_datasets",
  title: "List datasets",
  description:
    "The project's datasets by name: description, current version, item count, input and expected-output JSON Schemas, and " +
    "when each was created and last changed. Read a dataset's items with list_dataset_items, its experiments with get_experiment. " +
    "Pages: pass next_cursor back as cursor.",
  input: { limit: limitArg(50, MAX_DATASETS, "datasets"), cursor: cursorArg },
  action: "read",
  async run(args, { deps, key }) {
    const page = offsetPage(await listDatasets(deps.ports.sql, key.projectId), args.cursor, args.limit ?? 50);
    return { datasets: page.items.map(({ id: _id, ...d }) => d), next_cursor: page.next_cursor };
  },
});

/** list_dataset_items: a dataset's items at a version (GET /api/datasets/{name}/items: stores/datasets/datasets.ts readItems). */
import { z } from "zod";
import { ValidationError } from "../../../core/errors.js";
import { MAX_POSTGRES_INTEGER } from "../../../core/ports/sql.js";
import { datasetNamed, readItems } from "../../../stores/datasets/datasets.js";
import { isItemId, ITEM_STATUSES } from "../../../stores/datasets/items.js";
import { defineTool } from "../tool.js";
import { limitArg } from "./args.js";

const MAX_ITEMS = 100;

export const listDatasetItems = defineTool({
  name: "list_dataset_items",
  title: "List a dataset's items",
  description:
    "The items of a dataset (by name) as they were at a version (default: the current one), by item id: input, expected output, " +
    "metadata, where each came from (a run, a span, an upload) and its status. Pages: pass next_cursor back as cursor.",
  input: {
    dataset: z.string().min(1).max(200).describe("The dataset's name, as list_datasets lists it."),
    version: z.number().int().min(0).max(MAX_POSTGRES_INTEGER).optional().describe("A version of the dataset (default: the current one)."),
    status: z.enum(ITEM_STATUSES).optional().describe("Only active or only archived items."),
    limit: limitArg(20, MAX_ITEMS, "items"),
    cursor: z.string().min(1).max(200).optional().describe("next_cursor of the previous page (an item id)."),
  },
  action: "read",
  async run(args, { deps, key }) {
    if (args.cursor !== undefined && !isItemId(args.cursor)) throw new ValidationError({ field: "cursor", message: "cursor must be the next_cursor of the previous page" });
    const dataset = await datasetNamed(deps.ports.sql, key.projectId, args.dataset);
    const page = await readItems(deps.ports.sql, dataset, { version: args.version, status: args.status, limit: args.limit ?? 20, after: args.cursor });
    return { dataset: dataset.name, version: page.version, items: page.items, next_cursor: page.next_after };
  },
});

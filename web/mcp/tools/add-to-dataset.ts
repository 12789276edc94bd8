/**
 * add_to_dataset: a run (or one of its spans) as a new dataset item, made as the run page's "Add to dataset" makes it
 * (stores/datasets/run-items.ts) and written as a new version of the dataset. Needs what editing a dataset needs.
 */
import { z } from "zod";
import { MAX_SPAN_ID_CHARS } from "../../../core/events/schema.js";
import { ValidationError } from "../../../core/errors.js";
import { datasetNamed, writeItems } from "../../../stores/datasets/datasets.js";
import { runAsItem } from "../../../stores/datasets/run-items.js";
import { defineTool } from "../tool.js";
import { runOfKey, sdkRunIdArg } from "./args.js";

export const addToDataset = defineTool({
  name: "add_to_dataset",
  title: "Add a run to a dataset",
  description:
    "Adds a run (or one of its spans) to a dataset as a new item: the run's input as the item's input, and as expected output " +
    "either the value given in expected_output or, with use_run_output, the run's own output. Writes a new version of the " +
    "dataset and answers its number. Needs a key whose owner may edit datasets (member or above).",
  input: {
    sdk_run_id: sdkRunIdArg,
    dataset: z.string().min(1).max(200).describe("The dataset's name, as list_datasets lists it."),
    span_id: z.string().min(1).max(MAX_SPAN_ID_CHARS).optional().describe("One of the run's spans: its input instead of the run's."),
    expected_output: z.unknown().optional().describe("The item's expected output (any JSON value)."),
    use_run_output: z.boolean().optional().describe("Take the run's (or span's) own output as the expected output."),
  },
  action: "edit_datasets",
  async run(args, ctx) {
    const { sql } = ctx.deps.ports;
    if (args.expected_output !== undefined && args.use_run_output) {
      throw new ValidationError({ field: "expected_output", message: "give expected_output or use_run_output, not both" });
    }
    const dataset = await datasetNamed(sql, ctx.key.projectId, args.dataset);
    const run = await runOfKey(ctx, args.sdk_run_id);
    const expected = args.use_run_output ? "output" : args.expected_output !== undefined ? { value: args.expected_output } : "none";
    const item = await runAsItem(ctx.deps.events, run, { spanId: args.span_id, expected, place: "item" });
    const written = await writeItems(sql, ctx.key.projectId, dataset.name, [item], args.span_id ? "span" : "run", ctx.key.userId);
    return { dataset: dataset.name, ...written };
  },
});

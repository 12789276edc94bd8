/**
 * compare_experiments: experiments of one dataset side by side per item against a baseline, as the dashboard's
 * comparison shows them (web/datasets/comparison-read.ts, experiment-comparison.ts).
 */
import { z } from "zod";
import { datasetNamed } from "../../../stores/datasets/datasets.js";
import { experimentWithId } from "../../../stores/datasets/experiments.js";
import { MAX_COMPARED, readComparison } from "../../datasets/comparison-read.js";
import { defineTool } from "../tool.js";
import { limitArg } from "./args.js";

const MAX_ITEMS = 50;

export const compareExperiments = defineTool({
  name: "compare_experiments",
  title: "Compare experiments",
  description:
    `Compares 1 to ${MAX_COMPARED} experiments of the same dataset item by item against a baseline (the one named, else the ` +
    "experiment of the agent's active config version, else the oldest): each experiment's summary, and per item each " +
    "experiment's status, outputs, mean scores, score deltas against the baseline, and whether it regressed (a score dropped " +
    "or a run failed that the baseline's did not) or improved. only_regressions keeps the regressed items. Pages: pass " +
    "next_cursor back as cursor.",
  input: {
    experiment_ids: z.array(z.string().min(1).max(64)).min(1).max(MAX_COMPARED).describe("The experiments' ids (one dataset's)."),
    baseline: z.string().min(1).max(64).optional().describe("The id of the experiment the others are compared with."),
    only_regressions: z.boolean().optional().describe("Only the items where an experiment regressed against the baseline."),
    limit: limitArg(20, MAX_ITEMS, "items"),
    cursor: z.string().min(1).max(200).optional().describe("next_cursor of the previous page (an item id)."),
  },
  action: "read",
  async run(args, { deps, key }) {
    const { sql, clickhouse } = deps.ports;
    const ids = [...new Set(args.experiment_ids.map((id) => id.toLowerCase()))];
    const first = await experimentWithId(sql, key.projectId, ids[0]!);
    const dataset = await datasetNamed(sql, key.projectId, first.dataset);
    const c = await readComparison(sql, clickhouse, key.projectId, dataset, {
      ids, baseline: args.baseline?.toLowerCase(), after: args.cursor, onlyRegressions: args.only_regressions, limit: args.limit ?? 20,
    });
    return {
      dataset: dataset.name,
      baseline: c.experiments.length > 1 ? c.experiments[0]!.id : null,
      experiments: c.aggregates,
      regression_count: c.regression_count,
      items: c.rows.map((row) => ({
        item: { id: row.item.id, input: row.item.input, expected_output: row.item.expected_output },
        regression: row.regression,
        cells: row.cells.map((cell, k) => ({ experiment_id: c.experiments[k]!.id, ...cell })),
      })),
      next_cursor: c.next_after,
    };
  },
});

/**
 * get_experiment: an experiment's summary and its results item by item (GET /api/experiments/{id}:
 * stores/datasets/experiment-results.ts), or, given a dataset, the dataset's experiments with their summaries.
 */
import { z } from "zod";
import { ValidationError } from "../../../core/errors.js";
import { datasetNamed } from "../../../stores/datasets/datasets.js";
import { experimentResults, experimentSummary, summarizeExperiment } from "../../../stores/datasets/experiment-results.js";
import { experimentWithId, listExperiments } from "../../../stores/datasets/experiments.js";
import { defineTool } from "../tool.js";
import { cursorArg, limitArg, offsetPage } from "./args.js";

const MAX_RESULTS = 100;

export const getExperiment = defineTool({
  name: "get_experiment",
  title: "Get an experiment's results",
  description:
    "Give experiment_id for one experiment: its summary (dataset, version, agent, config version, status, completed and " +
    "error counts, mean of each score, cost, latency p50/p95) and its results per dataset item and repetition (the run's " +
    "sdk_run_id, status, output, error, scores, cost, latency). Or give dataset (a name) to list that dataset's experiments " +
    "with their summaries, newest first. Pages: pass next_cursor back as cursor.",
  input: {
    experiment_id: z.string().min(1).max(64).optional().describe("The experiment's id."),
    dataset: z.string().min(1).max(200).optional().describe("A dataset's name: list its experiments instead."),
    limit: limitArg(20, MAX_RESULTS, "results (or experiments)"),
    cursor: cursorArg,
  },
  action: "read",
  async run(args, { deps, key }) {
    const { sql, clickhouse } = deps.ports;
    const limit = args.limit ?? 20;
    if ((args.experiment_id === undefined) === (args.dataset === undefined)) {
      throw new ValidationError({ field: "experiment_id", message: "give either experiment_id (one experiment's results) or dataset (its experiments)" });
    }
    if (args.dataset !== undefined) {
      const dataset = await datasetNamed(sql, key.projectId, args.dataset);
      const page = offsetPage(await listExperiments(sql, key.projectId, dataset.id), args.cursor, limit);
      const experiments = [];
      for (const e of page.items) experiments.push(await summarizeExperiment(clickhouse, key.projectId, e));
      return { dataset: dataset.name, experiments, next_cursor: page.next_cursor };
    }
    const experiment = await experimentWithId(sql, key.projectId, args.experiment_id!);
    const results = await experimentResults(clickhouse, key.projectId, experiment.id);
    const page = offsetPage(results, args.cursor, limit);
    return { experiment: experimentSummary(experiment, results), results: page.items, next_cursor: page.next_cursor };
  },
});

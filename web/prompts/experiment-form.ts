/**
 * What a prompt's page shows for "Run experiment" (docs/PROMPTS.md, Experiments over prompt versions): the datasets
 * and evaluators a member may pick, and the experiments started from the page lately with their progress.
 */
import { listDatasets } from "../../stores/datasets/datasets.js";
import { listEvaluators } from "../../stores/evaluation/evaluators.js";
import { promptExperimentJobs } from "../../stores/prompt-experiment-jobs.js";
import type { WebDeps } from "../deps.js";

/** Jobs listed on the page. */
const JOBS_SHOWN = 10;

export async function experimentFormVars(deps: WebDeps, projectId: number, name: string, mayRun: boolean) {
  const { sql } = deps.ports;
  const [jobs, datasets, evaluators] = await Promise.all([
    promptExperimentJobs(sql, projectId, name, JOBS_SHOWN),
    mayRun ? listDatasets(sql, projectId) : Promise.resolve([]),
    mayRun ? listEvaluators(sql, projectId) : Promise.resolve([]),
  ]);
  return {
    experiment_jobs: jobs,
    run_datasets: datasets.filter((d) => d.version > 0).map((d) => d.name),
    run_evaluators: evaluators.map((e) => ({ id: e.id, name: e.name })),
  };
}

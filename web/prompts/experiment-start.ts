/**
 * Starting a prompt page's experiment (docs/PROMPTS.md, Experiments over prompt versions), for the API and the page
 * alike: the body is checked whole before anything is made (a 422 naming the field), then the experiment is made by
 * the member who asked — naming the prompt's version, so the gate on `production` counts it — the chosen evaluators
 * are attached as rules that judge its runs as they end (`given_by: evaluator`), and the job is queued for the
 * background worker (experiment-worker.ts).
 */
import { ValidationError } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import { createRule } from "../../evaluation/index.js";
import { findDataset } from "../../stores/datasets/datasets.js";
import { createExperiment, parseExperimentInput, type Experiment } from "../../stores/datasets/experiments.js";
import { evaluatorNamed, findEvaluator, type Evaluator } from "../../stores/evaluation/evaluators.js";
import { insertPromptExperimentJob, type PromptExperimentJob } from "../../stores/prompt-experiment-jobs.js";
import type { WebDeps } from "../deps.js";
import { readVersionOf } from "./playground-run.js";
import { subjectOfBody } from "./playground-api.js";
import { PROMPT_EXPERIMENTS_CHANNEL } from "./experiment-worker.js";
import { EXPERIMENT_AGENT } from "./experiment-item.js";

/** Evaluators one experiment may attach. */
export const MAX_EVALUATORS = 10;
const KNOWN = new Set(["dataset", "version", "label", "name", "description", "evaluators", "repetitions"]);

export interface StartedExperiment {
  readonly experiment: Experiment;
  readonly job: PromptExperimentJob;
}

async function evaluatorsOf(deps: WebDeps, projectId: number, raw: unknown): Promise<Evaluator[]> {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.length > MAX_EVALUATORS) {
    throw new ValidationError({ field: "evaluators", message: `evaluators must be a list of at most ${MAX_EVALUATORS} evaluator names or ids` });
  }
  const out: Evaluator[] = [];
  for (const [i, v] of raw.entries()) {
    const found = typeof v !== "string" ? undefined
      : (isUuid(v) ? await findEvaluator(deps.ports.sql, projectId, v) : undefined) ?? await evaluatorNamed(deps.ports.sql, projectId, v);
    if (!found) throw new ValidationError({ field: `evaluators.${i}`, message: `evaluators.${i}: no evaluator named ${JSON.stringify(v)} in this project` });
    if (!out.some((e) => e.id === found.id)) out.push(found);
  }
  return out;
}

export async function startPromptExperiment(
  deps: WebDeps, projectId: number, userId: number, name: string, body: Record<string, unknown>,
): Promise<StartedExperiment> {
  const { sql } = deps.ports;
  const unknown = Object.keys(body).find((k) => !KNOWN.has(k));
  if (unknown) throw new ValidationError({ field: unknown, message: `${unknown} is not a known field (expected ${[...KNOWN].join(", ")})` });
  const { version, label } = body;
  const subject = subjectOfBody({ ...(version !== undefined ? { version } : {}), ...(label !== undefined ? { label } : {}) });
  if (!("ref" in subject)) throw new ValidationError({ field: "version", message: "give a version or a label to run" });
  const v = await readVersionOf(deps, projectId, name, subject.ref);
  if (typeof body.dataset !== "string" || body.dataset.trim() === "") {
    throw new ValidationError({ field: "dataset", message: "dataset is required: the name of one of the project's datasets" });
  }
  const dataset = await findDataset(sql, projectId, body.dataset);
  if (!dataset) throw new ValidationError({ field: "dataset", message: `no dataset named ${JSON.stringify(body.dataset)} in this project` });
  const evaluators = await evaluatorsOf(deps, projectId, body.evaluators);
  const input = parseExperimentInput({
    dataset: dataset.name,
    name: body.name ?? `${name} v${v.version} · ${new Date().toISOString().slice(0, 19).replace("T", " ")}`,
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.repetitions !== undefined ? { repetitions: body.repetitions } : {}),
    agent_name: EXPERIMENT_AGENT, prompt_name: name, prompt_version: v.version,
  });
  const experiment = await createExperiment(sql, projectId, dataset, input, userId);
  // Before the job is queued, so that every run is judged as it ends.
  for (const e of evaluators) {
    await createRule(deps.ports, projectId, userId, {
      evaluator_id: e.id, name: `experiment ${experiment.id}: ${e.name}`.slice(0, 200), filter: { experiment_id: experiment.id }, sampling: 1,
    });
  }
  const job = await insertPromptExperimentJob(sql, {
    experimentId: experiment.id, projectId, promptName: name, promptVersion: v.version, createdBy: userId, total: experiment.item_count * experiment.repetitions,
  });
  await deps.ports.pubsub.publish(PROMPT_EXPERIMENTS_CHANNEL, String(projectId)).catch(() => {}); // the worker polls too
  return { experiment, job };
}

/** A job as the API and the page show it: its progress, and where its experiment is read. */
export function jobJson(job: PromptExperimentJob, experiment: Pick<Experiment, "id" | "name" | "dataset">) {
  return {
    experiment_id: job.experiment_id, experiment_name: experiment.name, dataset: experiment.dataset,
    prompt_name: job.prompt_name, prompt_version: job.prompt_version, status: job.status,
    total: job.total, done: job.done, failed: job.failed, message: job.message, created_at: job.created_at, updated_at: job.updated_at,
    url: `/datasets/${encodeURIComponent(experiment.dataset)}/compare?experiments=${experiment.id}`,
  };
}

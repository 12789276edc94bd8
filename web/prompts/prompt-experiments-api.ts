/**
 * Running a dataset through a prompt version as an experiment, from the API (docs/PROMPTS.md, Experiments over prompt
 * versions; Bearer key with scope read+ingest; starting needs `edit_prompts`, members and above, as the page):
 *
 *   POST /api/prompts/{name}/experiments {dataset, version? | label?, name?, description?, evaluators?, repetitions?}
 *                                              → 202 {experiment, job}: made and queued; the background worker runs it
 *   GET  /api/prompts/{name}/experiments/{id}  → {job}: its progress (status, done of total, failed, message)
 *
 * 422 naming the field for a version, label, dataset or evaluator the project lacks; 409 name_taken or empty_dataset.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { NotFound, ValidationError } from "../../core/errors.js";
import { summarizeExperiment } from "../../stores/datasets/experiment-results.js";
import { experimentWithId } from "../../stores/datasets/experiments.js";
import { promptExperimentJob } from "../../stores/prompt-experiment-jobs.js";
import { checkPromptName } from "../../stores/prompt-input.js";
import { keyPrincipalOf, readAuthorizer } from "../api/read-api.js";
import type { WebDeps } from "../deps.js";
import { readJsonBody } from "../json-body.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { mountApi } from "../route-table.js";
import { jobJson, startPromptExperiment } from "./experiment-start.js";

export function registerPromptExperimentsApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  mountApi(router, deps, readAuthorizer(deps, auth), {
    read: { "GET /api/prompts/:name/experiments/:id": getJob },
    edit_prompts: { "POST /api/prompts/:name/experiments": postExperiment },
  });
}

async function postExperiment(ctx: Context, deps: WebDeps): Promise<void> {
  const raw = await readJsonBody(ctx, 64 * 1024);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new ValidationError({ message: 'the body must be a JSON object like {"dataset": "support questions", "version": 2, "evaluators": ["correctness"]}' });
  }
  const p = keyPrincipalOf(ctx);
  const started = await startPromptExperiment(deps, p.projectId, p.userId, checkPromptName(ctx.params.name), raw as Record<string, unknown>);
  ctx.status = 202;
  ctx.body = { experiment: await summarizeExperiment(deps.ports.clickhouse, p.projectId, started.experiment), job: jobJson(started.job, started.experiment) };
}

async function getJob(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const job = await promptExperimentJob(deps.ports.sql, p.projectId, ctx.params.id!);
  if (job.prompt_name !== ctx.params.name) throw new NotFound({ resource: "experiment", message: `prompt ${JSON.stringify(ctx.params.name)} has no experiment with id ${JSON.stringify(ctx.params.id)}` });
  const experiment = await experimentWithId(deps.ports.sql, p.projectId, job.experiment_id);
  ctx.set("Cache-Control", "no-store");
  ctx.body = { job: jobJson(job, experiment) };
}

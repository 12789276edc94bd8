/**
 * "Run experiment" on a prompt's page (docs/PROMPTS.md, Experiments over prompt versions), as the API starts one
 * (experiment-start.ts) and with the same role (`edit_prompts`):
 *
 *   POST /prompts/:name/experiments      {dataset, version, evaluators (checkboxes), name?}: start it, then its progress
 *   GET  /prompts/:name/experiments/:id  its progress (the page reloads itself while it runs) and a link to the experiment
 *
 * A refusal shows the prompt's page again with the form as sent and the message by its field.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { NotFound } from "../../core/errors.js";
import { experimentWithId } from "../../stores/datasets/experiments.js";
import { promptExperimentJob } from "../../stores/prompt-experiment-jobs.js";
import { checkPromptName } from "../../stores/prompt-input.js";
import { projectOfRequest } from "../auth/project.js";
import type { SessionUser, WebDeps } from "../deps.js";
import { formAction, formValues, readForm, redirectAfterPost } from "../forms.js";
import { renderPage } from "../common/render.js";
import { mountPages } from "../route-table.js";
import { jobJson, startPromptExperiment } from "./experiment-start.js";
import { promptPage } from "./prompts-page.js";

export function registerPromptExperimentsPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: { "GET /prompts/:name/experiments/:id": progressPage },
    edit_prompts: { "POST /prompts/:name/experiments": runExperiment },
  });
}

const experimentPath = (name: string, id: string) => `/prompts/${encodeURIComponent(name)}/experiments/${encodeURIComponent(id)}`;

async function runExperiment(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  const name = checkPromptName(ctx.params.name);
  await formAction({
    refuses: ["ValidationError", "Conflict"],
    field: "dataset",
    run: async () => {
      const version = Number(form.version);
      const body = {
        dataset: form.dataset ?? "", version: Number.isInteger(version) && version > 0 ? version : form.version,
        evaluators: formValues(ctx, "evaluators"), ...(form.name?.trim() ? { name: form.name.trim() } : {}),
      };
      const started = await startPromptExperiment(deps, projectOfRequest(ctx).id, (ctx.state.user as SessionUser).id, name, body);
      redirectAfterPost(ctx, experimentPath(name, started.experiment.id), `Started ${started.experiment.name}`);
    },
    refused: (r) => promptPage(ctx, deps, { run_values: form, run_errors: { [r.field.split(".")[0]!]: r.message } }, r.status),
  });
}

async function progressPage(ctx: Context, deps: WebDeps): Promise<void> {
  const projectId = projectOfRequest(ctx).id;
  const name = checkPromptName(ctx.params.name);
  const job = await promptExperimentJob(deps.ports.sql, projectId, ctx.params.id!);
  if (job.prompt_name !== name) throw new NotFound({ resource: "experiment", message: `prompt ${JSON.stringify(name)} has no such experiment` });
  const experiment = await experimentWithId(deps.ports.sql, projectId, job.experiment_id);
  const running = job.status === "queued" || job.status === "running";
  renderPage(ctx, "prompt-experiment.njk", {
    title: `Experiment ${experiment.name}`, name, job: jobJson(job, experiment), running,
    percent: job.total > 0 ? Math.round((100 * job.done) / job.total) : 100, flash: typeof ctx.query.flash === "string" ? ctx.query.flash : undefined,
  });
}

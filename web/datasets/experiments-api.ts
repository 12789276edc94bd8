/**
 * Experiments API (Bearer key with scope read+ingest, the read API's rate-limit bucket; docs/EVALUATION.md):
 *
 *   POST /api/experiments {dataset, name, description?, dataset_version?, metadata?, agent_name?, config_version?, prompt_name?, prompt_version?, repetitions?}
 *                                                   → 201 {experiment}; 409 name_taken, empty_dataset
 *   GET  /api/experiments?dataset&name              → {experiments: [... with their aggregates]}
 *   GET  /api/experiments/{id}                      → {experiment, items: [...]}
 *   POST /api/experiments/{id}/complete             → {experiment}
 *
 * An experiment is the key's project's: another project's id is a 404 like one that does not exist.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { ValidationError } from "../../core/errors.js";
import { datasetNamed } from "../../stores/datasets/datasets.js";
import { experimentResults, experimentSummary, summarizeExperiment } from "../../stores/datasets/experiment-results.js";
import {
  completeExperiment, createExperiment, experimentNamed, experimentWithId, listExperiments, parseExperimentInput, type Experiment,
} from "../../stores/datasets/experiments.js";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { WebDeps } from "../deps.js";
import { readJsonBody } from "../json-body.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { keyPrincipalOf, readAuthorizer, stringParam } from "../api/read-api.js";
import { mountApi } from "../route-table.js";

const EXPERIMENT_BODY_LIMIT = 256 * 1024;

export async function experimentWithResults(ch: ClickHouse, projectId: number, e: Experiment) {
  const results = await experimentResults(ch, projectId, e.id);
  return { experiment: experimentSummary(e, results), items: results };
}

export function registerExperimentsApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  const authorize = readAuthorizer(deps, auth);
  mountApi(router, deps, authorize, {
    send: { "POST /api/experiments": postExperiment, "POST /api/experiments/:id/complete": postComplete },
    read: { "GET /api/experiments": getExperiments, "GET /api/experiments/:id": getExperiment },
  });
}

async function postExperiment(ctx: Context, deps: WebDeps): Promise<void> {
  const { sql } = deps.ports;
  const p = keyPrincipalOf(ctx);
  const input = parseExperimentInput(await readJsonBody(ctx, EXPERIMENT_BODY_LIMIT, { unstorable: "repair" }));
  const dataset = await datasetNamed(sql, p.projectId, input.dataset);
  const experiment = await createExperiment(sql, p.projectId, dataset, input, p.userId);
  ctx.status = 201;
  ctx.body = { experiment: experimentSummary(experiment, []) };
}

async function getExperiments(ctx: Context, deps: WebDeps): Promise<void> {
  const { sql, clickhouse } = deps.ports;
  const p = keyPrincipalOf(ctx);
  const name = stringParam(ctx, "dataset");
  if (name === undefined) throw new ValidationError({ field: "dataset", message: "dataset is required: the name of the dataset whose experiments to list" });
  const dataset = await datasetNamed(sql, p.projectId, name);
  const only = stringParam(ctx, "name");
  const experiments = only === undefined
    ? await listExperiments(sql, p.projectId, dataset.id)
    : [await experimentNamed(sql, p.projectId, dataset, only)].filter((e): e is Experiment => e !== undefined);
  const out = [];
  for (const e of experiments) out.push(await summarizeExperiment(clickhouse, p.projectId, e));
  ctx.set("Cache-Control", "no-store");
  ctx.body = { experiments: out };
}

async function getExperiment(ctx: Context, deps: WebDeps): Promise<void> {
  const { sql, clickhouse } = deps.ports;
  const p = keyPrincipalOf(ctx);
  const experiment = await experimentWithId(sql, p.projectId, ctx.params.id!);
  ctx.set("Cache-Control", "no-store");
  ctx.body = await experimentWithResults(clickhouse, p.projectId, experiment);
}

async function postComplete(ctx: Context, deps: WebDeps): Promise<void> {
  const { sql, clickhouse } = deps.ports;
  const p = keyPrincipalOf(ctx);
  const experiment = await completeExperiment(sql, p.projectId, ctx.params.id!);
  ctx.body = { experiment: await summarizeExperiment(clickhouse, p.projectId, experiment) };
}

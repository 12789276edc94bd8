/**
 * The dashboard's experiments of a dataset (docs/EVALUATION.md):
 *
 *   GET /datasets/:name/experiments                 one row per experiment: score means, errors, cost, latency
 *                                                   p50/p95, the agent's config version; pick some to compare
 *   GET /datasets/:name/compare?experiments=a,b,…   the experiments side by side per item against a baseline
 *       [&baseline=id]                              (?baseline=, else the agent's active config version's, else the
 *                                                   oldest; experiment-comparison.ts): outputs, scores, deltas,
 *                                                   regressions; live while one runs (?fragment=table is the part a
 *                                                   pushed run re-fetches)
 *
 * Both need `read` (core/access/roles.ts). An experiment of another dataset or project is a 404.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { ValidationError } from "../../core/errors.js";
import { datasetNamed } from "../../stores/datasets/datasets.js";
import { summarizeExperiment } from "../../stores/datasets/experiment-results.js";
import { listExperiments } from "../../stores/datasets/experiments.js";
import { projectOfRequest } from "../auth/project.js";
import type { WebDeps } from "../deps.js";
import { scoreNames } from "./experiment-comparison.js";
import { MAX_COMPARED, readComparison } from "./comparison-read.js";
import { queryParam, renderFragment, renderPage } from "../common/render.js";
import { mountPages } from "../route-table.js";

/** Items per page of the comparison. */
export const COMPARE_PAGE_ITEMS = 100;

function experimentIds(ctx: Context): string[] {
  const raw = ctx.query.experiments;
  const ids = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).flatMap((v) => v.split(",")).map((v) => v.trim()).filter(Boolean);
  const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
  if (unique.length === 0) throw new ValidationError({ field: "experiments", message: "choose at least one experiment to show" });
  if (unique.length > MAX_COMPARED) throw new ValidationError({ field: "experiments", message: `compare at most ${MAX_COMPARED} experiments at once` });
  return unique;
}

export function registerExperimentsPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: { "GET /datasets/:name/experiments": experimentsPage, "GET /datasets/:name/compare": comparePage },
  });
}

/** GET /datasets/:name/experiments: one row per experiment. */
async function experimentsPage(ctx: Context, deps: WebDeps): Promise<void> {
  const { sql, clickhouse } = deps.ports;
  const projectId = projectOfRequest(ctx).id;
  const dataset = await datasetNamed(sql, projectId, String(ctx.params.name));
  const experiments = [];
  for (const e of await listExperiments(sql, projectId, dataset.id)) experiments.push(await summarizeExperiment(clickhouse, projectId, e));
  renderPage(ctx, "experiments.njk", { title: `Experiments of ${dataset.name}`, dataset, experiments, score_names: scoreNames(experiments) });
}

/** GET /datasets/:name/compare: the chosen experiments side by side, a page of items at a time. */
async function comparePage(ctx: Context, deps: WebDeps): Promise<void> {
  const { sql, clickhouse } = deps.ports;
  const projectId = projectOfRequest(ctx).id;
  const dataset = await datasetNamed(sql, projectId, String(ctx.params.name));
  const c = await readComparison(sql, clickhouse, projectId, dataset, {
    ids: experimentIds(ctx), baseline: queryParam(ctx, "baseline"), after: queryParam(ctx, "after"),
    onlyRegressions: queryParam(ctx, "only") === "regressions", limit: COMPARE_PAGE_ITEMS,
  });
  const ids = c.experiments.map((e) => e.id).join(",");
  const baselineId = c.experiments.length > 1 ? c.experiments[0]!.id : undefined;
  const view = {
    title: `Compare experiments of ${dataset.name}`, dataset, experiments: c.aggregates, score_names: scoreNames(c.aggregates),
    rows: c.rows, next_after: c.next_after, regression_count: c.regression_count,
    only_regressions: c.onlyRegressions, ids, baseline_id: baselineId,
    compare_query: `experiments=${ids}${baselineId ? `&baseline=${baselineId}` : ""}`,
    active_versions: Object.fromEntries(c.active), live: c.experiments.some((e) => e.status === "running"),
  };
  if (queryParam(ctx, "fragment") === "table") renderFragment(ctx, "_experiment_table.njk", view);
  else renderPage(ctx, "experiment-compare.njk", view);
}

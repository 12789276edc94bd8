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
import { NotFound, ValidationError } from "../../core/errors.js";
import { datasetNamed, readItems, readItemsWithIds, type Dataset } from "../../stores/datasets/datasets.js";
import { byteOrder, experimentResults, experimentSummary, summarizeExperiment } from "../../stores/datasets/experiment-results.js";
import { findExperiment, listExperiments, type Experiment } from "../../stores/datasets/experiments.js";
import { activeVersions } from "../../stores/agent-registry.js";
import { isItemId } from "../../stores/datasets/items.js";
import type { Sql } from "../../core/ports/sql.js";
import { projectOfRequest } from "../auth/project.js";
import type { WebDeps } from "../deps.js";
import { compareItems, inBaselineOrder, resultsByItem, scoreNames } from "./experiment-comparison.js";
import { queryParam, renderFragment, renderPage } from "../common/render.js";
import { mountPages } from "../route-table.js";

/** Items per page of the comparison. */
export const COMPARE_PAGE_ITEMS = 100;
/** Most experiments side by side. */
export const MAX_COMPARED = 5;

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
  const picked: Experiment[] = [];
  for (const id of experimentIds(ctx)) {
    const e = await findExperiment(sql, projectId, id);
    if (!e || e.dataset_id !== dataset.id) throw new NotFound({ resource: "experiment", message: `dataset ${JSON.stringify(dataset.name)} has no experiment ${JSON.stringify(id)}` });
    picked.push(e);
  }
  const active = await activeVersions(sql, projectId, picked.flatMap((e) => (e.agent_name === null ? [] : [e.agent_name])));
  const chosen = inBaselineOrder(picked, active, queryParam(ctx, "baseline"));
  const baselineId = chosen.length > 1 ? chosen[0]!.id : undefined;
  const results = await Promise.all(chosen.map((e) => experimentResults(clickhouse, projectId, e.id)));
  const byItem = results.map(resultsByItem);
  const aggregates = chosen.map((e, k) => experimentSummary(e, results[k]!));
  const onlyRegressions = queryParam(ctx, "only") === "regressions" && chosen.length > 1;
  // Every item with a result is compared once: the regressions are counted over all of them, the page shows some.
  const compared = new Map(compareItems([...new Set(results.flatMap((r) => r.map((x) => x.item_id)))].sort(byteOrder).map((id) => ({ id })), byItem)
    .map((row) => [row.item.id, row]));
  const regressed = [...compared.values()].filter((row) => row.regression).map((row) => row.item.id);
  const page = await comparisonPage(sql, dataset, chosen[0]!.dataset_version, queryParam(ctx, "after"), onlyRegressions ? regressed : undefined);
  const rows = page.items.map((item) => {
    const row = compared.get(item.id);
    return row ? { ...row, item } : compareItems([item], byItem)[0]!;
  });
  const view = {
    title: `Compare experiments of ${dataset.name}`, dataset, experiments: aggregates, score_names: scoreNames(aggregates),
    rows, next_after: page.next_after, regression_count: regressed.length,
    only_regressions: onlyRegressions, ids: chosen.map((e) => e.id).join(","), baseline_id: baselineId,
    compare_query: `experiments=${chosen.map((e) => e.id).join(",")}${baselineId ? `&baseline=${baselineId}` : ""}`,
    active_versions: Object.fromEntries(active), live: chosen.some((e) => e.status === "running"),
  };
  if (queryParam(ctx, "fragment") === "table") renderFragment(ctx, "_experiment_table.njk", view);
  else renderPage(ctx, "experiment-compare.njk", view);
}

/** A page of the baseline version's items (or of the regressed ones) after the item id `after`. */
async function comparisonPage(sql: Sql, dataset: Dataset, version: number, after: string | undefined, only: readonly string[] | undefined) {
  const from = after && isItemId(after) ? after : undefined;
  if (!only) return readItems(sql, dataset, { version, limit: COMPARE_PAGE_ITEMS, after: from });
  const ids = only.filter((id) => from === undefined || byteOrder(id, from) > 0);
  const items = await readItemsWithIds(sql, dataset, version, ids.slice(0, COMPARE_PAGE_ITEMS));
  return { version, items, next_after: ids.length > COMPARE_PAGE_ITEMS ? items[items.length - 1]?.id ?? null : null };
}


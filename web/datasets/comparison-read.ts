/**
 * What a comparison of experiments reads (experiment-comparison.ts says how a row is compared): the experiments in
 * baseline order, their aggregates, and a page of the baseline version's items (or of the regressed ones) with each
 * experiment's results. The dashboard's compare page and the MCP server's compare_experiments read it here.
 */
import { NotFound } from "../../core/errors.js";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { Sql } from "../../core/ports/sql.js";
import { activeVersions } from "../../stores/agent-registry.js";
import { readItems, readItemsWithIds, type Dataset, type DatasetItem } from "../../stores/datasets/datasets.js";
import { byteOrder, experimentResults, experimentSummary, type ExperimentSummary } from "../../stores/datasets/experiment-results.js";
import { findExperiment, type Experiment } from "../../stores/datasets/experiments.js";
import { isItemId } from "../../stores/datasets/items.js";
import { compareItems, inBaselineOrder, resultsByItem, type ComparedRow } from "./experiment-comparison.js";

/** Most experiments side by side. */
export const MAX_COMPARED = 5;

export interface ComparisonRequest {
  /** The experiments' ids (lower case, each once): the dataset's experiments, else a 404. */
  readonly ids: readonly string[];
  /** The baseline's id (else the active config version's experiment, else the oldest). */
  readonly baseline?: string;
  /** The page after this item id. */
  readonly after?: string;
  /** Only the items where an experiment regressed against the baseline. */
  readonly onlyRegressions?: boolean;
  /** Items per page. */
  readonly limit: number;
}

export interface Comparison {
  /** In column order: the baseline first. */
  readonly experiments: readonly Experiment[];
  readonly aggregates: readonly ExperimentSummary[];
  readonly rows: readonly ComparedRow<DatasetItem>[];
  readonly next_after: string | null;
  /** The items with a regression, over every item with a result (not only this page's). */
  readonly regression_count: number;
  readonly active: ReadonlyMap<string, number>;
  readonly onlyRegressions: boolean;
}

export async function readComparison(sql: Sql, ch: ClickHouse, projectId: number, dataset: Dataset, req: ComparisonRequest): Promise<Comparison> {
  const picked: Experiment[] = [];
  for (const id of req.ids) {
    const e = await findExperiment(sql, projectId, id);
    if (!e || e.dataset_id !== dataset.id) throw new NotFound({ resource: "experiment", message: `dataset ${JSON.stringify(dataset.name)} has no experiment ${JSON.stringify(id)}` });
    picked.push(e);
  }
  const active = await activeVersions(sql, projectId, picked.flatMap((e) => (e.agent_name === null ? [] : [e.agent_name])));
  const chosen = inBaselineOrder(picked, active, req.baseline);
  const results = await Promise.all(chosen.map((e) => experimentResults(ch, projectId, e.id)));
  const byItem = results.map(resultsByItem);
  const aggregates = chosen.map((e, k) => experimentSummary(e, results[k]!));
  const onlyRegressions = req.onlyRegressions === true && chosen.length > 1;
  // Every item with a result is compared once: the regressions are counted over all of them, the page shows some.
  const compared = new Map(compareItems([...new Set(results.flatMap((r) => r.map((x) => x.item_id)))].sort(byteOrder).map((id) => ({ id })), byItem)
    .map((row) => [row.item.id, row]));
  const regressed = [...compared.values()].filter((row) => row.regression).map((row) => row.item.id);
  const page = await itemsPage(sql, dataset, chosen[0]!.dataset_version, req, onlyRegressions ? regressed : undefined);
  const rows = page.items.map((item) => {
    const row = compared.get(item.id);
    return row ? { ...row, item } : compareItems([item], byItem)[0]!;
  });
  return { experiments: chosen, aggregates, rows, next_after: page.next_after, regression_count: regressed.length, active, onlyRegressions };
}

/** A page of the baseline version's items (or of the regressed ones) after the item id `after`. */
async function itemsPage(sql: Sql, dataset: Dataset, version: number, req: ComparisonRequest, only: readonly string[] | undefined) {
  const from = req.after && isItemId(req.after) ? req.after : undefined;
  if (!only) return readItems(sql, dataset, { version, limit: req.limit, after: from });
  const ids = only.filter((id) => from === undefined || byteOrder(id, from) > 0);
  const items = await readItemsWithIds(sql, dataset, version, ids.slice(0, req.limit));
  return { version, items, next_after: ids.length > req.limit ? items[items.length - 1]?.id ?? null : null };
}

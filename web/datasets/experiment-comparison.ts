/**
 * The comparison of experiments side by side, per item (docs/EVALUATION.md): for a page of the baseline's dataset
 * items, each experiment's output(s), scores and status; each score's delta against the baseline (the first
 * experiment), and a regression where a score dropped or a run failed that the baseline's did not.
 */
import { ValidationError } from "../../core/errors.js";
import type { DatasetItem } from "../../stores/datasets/datasets.js";
import type { ItemResult, ScoreValue } from "../../stores/datasets/experiment-results.js";

export interface ComparedCell {
  readonly results: readonly ItemResult[];
  /** Per score name: the mean over the item's repetitions (numbers and booleans), or the last text value. */
  readonly scores: Record<string, ScoreValue | null>;
  /** Per score name: this experiment's value minus the baseline's (numeric scores of both only). */
  readonly deltas: Record<string, number>;
  readonly status: "missing" | "running" | "success" | "error" | "mixed";
  readonly regression: boolean;
  readonly improvement: boolean;
}

export interface ComparedRow<I extends { id: string } = DatasetItem> {
  readonly item: I;
  readonly cells: readonly ComparedCell[];
  readonly regression: boolean;
}

interface Comparable {
  readonly id: string;
  readonly name: string;
  readonly created_at: string;
  readonly agent_name: string | null;
  readonly config_version: number | null;
}

/**
 * The experiments in the comparison's column order: the baseline first, then the others oldest first. The baseline
 * is `requested` (the page's ?baseline=) when given; else the experiment of an agent's active config version; else
 * the oldest. The order the experiments were picked in plays no part: the experiments list (newest first) and a link
 * naming the active version's experiment first compare the same pair the same way. A `requested` id that is not
 * one of the experiments is a 422 naming `baseline`.
 */
export function inBaselineOrder<E extends Comparable>(chosen: readonly E[], activeVersions: ReadonlyMap<string, number>, requested?: string): E[] {
  const oldestFirst = [...chosen].sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const isActive = (e: E) => e.agent_name !== null && e.config_version !== null && activeVersions.get(e.agent_name) === e.config_version;
  let baseline: E | undefined;
  if (requested !== undefined) {
    baseline = chosen.find((e) => e.id === requested.toLowerCase());
    if (!baseline) throw new ValidationError({ field: "baseline", message: "baseline must be one of the experiments compared" });
  } else {
    baseline = oldestFirst.find(isActive) ?? oldestFirst[0];
  }
  return baseline ? [baseline, ...oldestFirst.filter((e) => e !== baseline)] : [];
}

/** Results of one experiment by item id. */
export function resultsByItem(results: readonly ItemResult[]): Map<string, ItemResult[]> {
  const byItem = new Map<string, ItemResult[]>();
  for (const r of results) {
    const list = byItem.get(r.item_id);
    if (list) list.push(r);
    else byItem.set(r.item_id, [r]);
  }
  return byItem;
}

function cellScores(results: readonly ItemResult[]): Record<string, ScoreValue | null> {
  const acc = new Map<string, { sum: number; n: number; text: string | null }>();
  for (const r of results) {
    for (const [name, v] of Object.entries(r.scores)) {
      let a = acc.get(name);
      if (!a) acc.set(name, (a = { sum: 0, n: 0, text: null }));
      if (typeof v === "string") a.text = v;
      else {
        a.sum += Number(v);
        a.n++;
      }
    }
  }
  const out: Record<string, ScoreValue | null> = {};
  for (const [name, a] of acc) out[name] = a.n ? a.sum / a.n : a.text;
  return out;
}

function cellStatus(results: readonly ItemResult[]): ComparedCell["status"] {
  if (results.length === 0) return "missing";
  const statuses = new Set(results.map((r) => (r.status === "waiting_for_input" ? "running" : r.status)));
  return statuses.size === 1 ? ([...statuses][0] as ComparedCell["status"]) : "mixed";
}

/** The rows of the comparison for `items`, each experiment's results given by item (the first is the baseline). */
export function compareItems<I extends { id: string }>(items: readonly I[], experiments: readonly Map<string, ItemResult[]>[]): ComparedRow<I>[] {
  return items.map((item) => {
    let baseline: { scores: Record<string, ScoreValue | null>; status: ComparedCell["status"] } | undefined;
    const cells = experiments.map((byItem, k): ComparedCell => {
      const results = byItem.get(item.id) ?? [];
      const scores = cellScores(results);
      const status = cellStatus(results);
      if (k === 0) {
        baseline = { scores, status };
        return { results, scores, deltas: {}, status, regression: false, improvement: false };
      }
      const deltas: Record<string, number> = {};
      for (const [name, v] of Object.entries(scores)) {
        const base = baseline?.scores[name];
        if (typeof v === "number" && typeof base === "number") deltas[name] = v - base;
      }
      const dropped = Object.values(deltas).some((d) => d < -1e-9);
      const rose = Object.values(deltas).some((d) => d > 1e-9);
      const newlyFailed = status === "error" && baseline?.status === "success";
      return { results, scores, deltas, status, regression: dropped || newlyFailed, improvement: rose && !dropped && !newlyFailed };
    });
    return { item, cells, regression: cells.some((c) => c.regression) };
  });
}

/** The score names of the experiments' aggregates, in order. */
export function scoreNames(aggregates: readonly { scores: Record<string, unknown> }[]): string[] {
  return [...new Set(aggregates.flatMap((a) => Object.keys(a.scores)))].sort();
}

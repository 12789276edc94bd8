/**
 * The runs table's columns (stores/saved-views.ts RUN_COLUMNS) as its header shows them: a label, and for the
 * columns the list can be ordered by, the link that orders it (the same column again flips the direction).
 */
import type { RunsSort } from "../../core/runs-filter/index.js";
import { RUN_COLUMNS, type RunColumn } from "../../stores/saved-views.js";
import { runsQuery, type RunsView } from "../common/runs-url.js";

interface ColumnMeta {
  readonly label: string;
  /** The sort this column's header sets. */
  readonly sort?: "start_time" | "duration" | "cost" | "tokens";
  readonly num?: boolean;
}

export const COLUMN_META: Readonly<Record<RunColumn, ColumnMeta>> = {
  agent: { label: "Agent" },
  input: { label: "Input" },
  output: { label: "Output" },
  tags: { label: "Tags" },
  started: { label: "Started", sort: "start_time" },
  duration: { label: "Duration", sort: "duration", num: true },
  tokens: { label: "Tokens", sort: "tokens", num: true },
  cost: { label: "Cost", sort: "cost", num: true },
  scores: { label: "Scores" },
  model: { label: "Model" },
  models: { label: "Models" },
  events: { label: "Events", num: true },
  error: { label: "Last error" },
  environment: { label: "Environment" },
  release: { label: "Release" },
  user: { label: "End user" },
  session: { label: "Session" },
  version: { label: "Version", num: true },
};

export interface ColumnHead {
  readonly key: RunColumn;
  readonly label: string;
  readonly num: boolean;
  /** The page's URL ordered by this column (relative to the project's base), when it can order. */
  readonly sort_url?: string;
  /** How the list is ordered by this column now. */
  readonly sorted?: RunsSort["order"];
}

/** Newest, slowest, dearest first: a header's first click orders descending. */
const toggled = (view: RunsView, field: RunsSort["field"]): RunsSort["order"] => (view.sort === field && view.order === "desc" ? "asc" : "desc");

/** The header of the table `path` (the page's path) shows for `view`. */
export function columnHeads(view: RunsView, path: string): ColumnHead[] {
  // Input and output together share one cell, the input over the output (_runs_table.njk).
  const both = view.cols.includes("input") && view.cols.includes("output");
  return view.cols.filter((key) => !(both && key === "output")).map((key) => {
    if (both && key === "input") return { key, label: "Input → output", num: false };
    const m = COLUMN_META[key];
    if (!m.sort) return { key, label: m.label, num: m.num === true };
    return {
      key, label: m.label, num: m.num === true,
      sort_url: path + runsQuery({ ...view, sort: m.sort, order: toggled(view, m.sort) }),
      ...(view.sort === m.sort ? { sorted: view.order } : {}),
    };
  });
}

/** The links that order the list by a score (the Scores column's menu), each with its current direction if any. */
export function scoreSorts(view: RunsView, path: string, names: readonly string[]): { name: string; url: string; sorted?: RunsSort["order"] }[] {
  return names.map((name) => {
    const field = `score.${name}` as RunsSort["field"];
    return { name, url: path + runsQuery({ ...view, sort: field, order: toggled(view, field) }), ...(view.sort === field ? { sorted: view.order } : {}) };
  });
}

/** Every column with whether the view shows it (the columns chooser). */
export const columnChoices = (view: RunsView) => RUN_COLUMNS.map((key) => ({ key, label: COLUMN_META[key].label, shown: view.cols.includes(key) }));

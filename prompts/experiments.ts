/**
 * A prompt's experiments (docs/PROMPTS.md, Experiments over prompt versions): those that name one of its versions,
 * newest first, each with the experiment machinery's own summary (stores/datasets) — the prompt's page lists them per
 * version and pairs each with the `production` version's latest experiment on the same dataset, for the comparison
 * of two experiments item by item that datasets already have.
 */
import type { ClickHouse } from "../core/ports/clickhouse.js";
import type { Sql } from "../core/ports/sql.js";
import { summarizeExperiment, type ExperimentSummary } from "../stores/datasets/experiment-results.js";
import { experimentsOfPrompt } from "../stores/datasets/experiments.js";
import { checkPromptName } from "../stores/prompt-input.js";

/** How many of a prompt's experiments its page summarizes (each summary is one ClickHouse read). */
export const EXPERIMENTS_SHOWN = 50;

export interface PromptExperiment {
  readonly summary: ExperimentSummary;
  /** The experiment to compare it with: the `production` version's latest on the same dataset, when another. */
  readonly baseline: { readonly id: string; readonly name: string; readonly version: number } | null;
}

export async function promptExperiments(sql: Sql, ch: ClickHouse, projectId: number, name: string, production: number | null): Promise<PromptExperiment[]> {
  const experiments = (await experimentsOfPrompt(sql, projectId, checkPromptName(name))).slice(0, EXPERIMENTS_SHOWN);
  const summaries = await Promise.all(experiments.map((e) => summarizeExperiment(ch, projectId, e)));
  return summaries.map((summary, i) => {
    const base = production === null || summary.prompt_version === production
      ? undefined
      : experiments.find((e) => e.prompt_version === production && e.dataset_id === experiments[i]!.dataset_id);
    return { summary, baseline: base ? { id: base.id, name: base.name, version: production! } : null };
  });
}

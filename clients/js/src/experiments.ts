/**
 * Experiments (docs/EVALUATION.md): run a task over every item of a dataset version, each item × repetition as an
 * ordinary traced run that names the experiment and the item, score each output with evaluator functions, and
 * return the server's summary. A task that throws makes that item's run an error and the rest go on; `resume`
 * re-runs only the items without a successful result.
 */
import { call, type ApiHost as DatasetHost } from "./api-call.js";
import { datasetItems, type DatasetItem } from "./datasets.js";
import { attachEvaluators } from "./evaluators.js";
import { randomUuid } from "./ids.js";
import type { Prompt } from "./prompts.js";
import { RunwatchError } from "./errors.js";
import type { Run, RunHost } from "./run.js";
import { postScores, type BatchScore, type ScoreValue } from "./scores.js";

export interface ExperimentTaskContext {
  readonly item: DatasetItem;
  readonly repetition: number;
  readonly experimentId: string;
  /** The item's run: the task's LLM calls, steps and LangChain/LangGraph callbacks report into it. */
  readonly run: Run;
}

export interface EvaluatorArgs {
  readonly input: unknown;
  readonly output: unknown;
  readonly expectedOutput: unknown;
  readonly metadata: Record<string, unknown>;
  readonly item: DatasetItem;
}

/** A score an evaluator gives: a value (named after the evaluator), or named values with comments. */
export type EvaluatorResult =
  | ScoreValue
  | { name?: string; value: ScoreValue; comment?: string }
  | { name: string; value: ScoreValue; comment?: string }[]
  | null
  | undefined;

/** A function (its name is the score's name unless it returns named scores), or one with an explicit name. */
export type Evaluator =
  | ((args: EvaluatorArgs) => EvaluatorResult | Promise<EvaluatorResult>)
  | { name: string; evaluate: (args: EvaluatorArgs) => EvaluatorResult | Promise<EvaluatorResult> };

export interface ExperimentOptions {
  dataset: string;
  name: string;
  task: (input: unknown, context: ExperimentTaskContext) => unknown;
  evaluators?: readonly Evaluator[];
  /**
   * The project's server-side evaluators (names or ids) that judge each run of the experiment as it ends: their
   * scores arrive on the server a moment later, on the experiment's page (live) and GET /api/experiments/{id}.
   */
  serverEvaluators?: readonly string[];
  /** Items run at once. Default 8. */
  maxConcurrency?: number;
  /** Runs per item. Default 1. A resume keeps the experiment's own. */
  repetitions?: number;
  description?: string;
  metadata?: Record<string, unknown>;
  /** The agent the runs belong to, and its config version (the activation gate compares experiments of it). */
  agentName?: string;
  configVersion?: number;
  /**
   * The prompt version the experiment runs: what getPrompt returned (the one the task uses), or promptName and
   * promptVersion. Listed on the prompt's page; the gate on its `production` label compares them (docs/PROMPTS.md).
   */
  prompt?: Prompt;
  promptName?: string;
  promptVersion?: number;
  /** The dataset version to run on. Default: the current one. */
  datasetVersion?: number;
  /** Continue the dataset's experiment of this name, re-running only items without a successful result. */
  resume?: boolean;
  /** How long to wait for the server to have stored every run before summarising. Default 30 s. */
  resultsTimeoutMs?: number;
}

/** The prompt version an experiment names; a fallback (the server was not reached) has none to name. */
function promptOf(o: ExperimentOptions): { prompt_name?: string; prompt_version?: number } {
  if (!o.prompt) return { prompt_name: o.promptName, prompt_version: o.promptVersion };
  if (o.prompt.isFallback || o.prompt.version === null) {
    throw new RunwatchError("invalid", `prompt ${JSON.stringify(o.prompt.name)} is the caller's fallback (the server was not reached): it has no version an experiment can name`);
  }
  return { prompt_name: o.prompt.name, prompt_version: o.prompt.version };
}

export interface ExperimentSummary {
  experimentId: string;
  name: string;
  dataset: string;
  datasetVersion: number;
  /** The experiment's page on the dashboard. */
  url: string;
  /** Item × repetition runs this call started, and those a resume kept. */
  ran: number;
  skipped: number;
  completedCount: number;
  errorCount: number;
  scores: Record<string, { mean: number | null; count: number }>;
  costUsd: number;
  latencyMs: { p50: number | null; p95: number | null };
  taskErrors: { itemId: string; repetition: number; message: string }[];
  evaluatorErrors: { itemId: string; repetition: number; evaluator: string; message: string }[];
  items: ExperimentItemResult[];
}

export interface ExperimentItemResult {
  item_id: string;
  repetition: number;
  sdk_run_id: string;
  status: string;
  output: unknown;
  error: string | null;
  scores: Record<string, ScoreValue>;
  cost_usd: number;
  latency_ms: number | null;
}

interface ServerExperiment {
  id: string;
  name: string;
  dataset: string;
  dataset_version: number;
  /** Runs per item, as the experiment was made: a resume follows it whatever its options say. */
  repetitions: number;
  expected_count: number;
  completed_count: number;
  error_count: number;
  scores: Record<string, { mean: number | null; count: number }>;
  cost_usd: number;
  latency_ms: { p50: number | null; p95: number | null };
}

/** What an experiment needs from the client. */
export interface ExperimentHost extends DatasetHost, RunHost {
  run<T>(
    options: { agentName: string; input?: unknown; sdkRunId?: string; configVersion?: number; framework?: string; startFields?: Record<string, unknown> },
    fn: (run: Run) => T | Promise<T>,
  ): Promise<T>;
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err)).slice(0, 2_000);

function scoresOf(evaluator: Evaluator, result: EvaluatorResult): { name: string; value: ScoreValue; comment?: string }[] {
  const fallback = typeof evaluator === "function" ? evaluator.name || "score" : evaluator.name;
  if (result === null || result === undefined) return [];
  if (Array.isArray(result)) return result;
  if (typeof result === "object") return [{ name: result.name ?? fallback, value: result.value, comment: result.comment }];
  return [{ name: fallback, value: result }];
}

async function experimentOf(host: DatasetHost, o: ExperimentOptions): Promise<{ experiment: ServerExperiment; done: Set<string> }> {
  const key = (item: string, repetition: number) => `${item}\u0000${repetition}`;
  if (o.resume) {
    const query = new URLSearchParams({ dataset: o.dataset, name: o.name });
    const [found] = (await call<{ experiments: ServerExperiment[] }>(host, "GET", `/api/experiments?${query}`)).experiments;
    if (found) {
      const { items } = await call<{ items: ExperimentItemResult[] }>(host, "GET", `/api/experiments/${found.id}`);
      return { experiment: found, done: new Set(items.filter((i) => i.status === "success").map((i) => key(i.item_id, i.repetition))) };
    }
  }
  const body = {
    dataset: o.dataset, name: o.name, description: o.description, metadata: o.metadata, agent_name: o.agentName,
    config_version: o.configVersion, dataset_version: o.datasetVersion, repetitions: o.repetitions, ...promptOf(o),
  };
  return { experiment: (await call<{ experiment: ServerExperiment }>(host, "POST", "/api/experiments", body, 201)).experiment, done: new Set() };
}

/** Runs `o.task` over the dataset as the experiment `o.name`; resolves to the server's summary of it. */
export async function runExperiment(host: ExperimentHost, o: ExperimentOptions): Promise<ExperimentSummary> {
  const { experiment, done } = await experimentOf(host, o);
  // Before the first run ends, so that every run is judged.
  if (o.serverEvaluators?.length) await attachEvaluators(host, experiment, o.serverEvaluators);
  const repetitions = experiment.repetitions;
  const work: { item: DatasetItem; repetition: number }[] = [];
  let skipped = 0;
  for await (const item of datasetItems(host, o.dataset, { version: experiment.dataset_version, status: "active" })) {
    for (let repetition = 1; repetition <= repetitions; repetition++) {
      if (done.has(`${item.id}\u0000${repetition}`)) skipped++;
      else work.push({ item, repetition });
    }
  }
  const taskErrors: ExperimentSummary["taskErrors"] = [];
  const evaluatorErrors: ExperimentSummary["evaluatorErrors"] = [];
  // Sent in batches once the runs are sent: one request per thousand scores (a score waits for its run to be stored).
  const scores: BatchScore[] = [];
  const scoredBy: { itemId: string; repetition: number; evaluator: string }[] = [];
  const evaluators = o.evaluators ?? [];

  const started: string[] = [];
  const runOne = async ({ item, repetition }: { item: DatasetItem; repetition: number }): Promise<void> => {
    const sdkRunId = randomUuid();
    started.push(sdkRunId);
    let output: unknown;
    try {
      output = await host.run(
        {
          agentName: o.agentName ?? "experiment", input: item.input, sdkRunId, configVersion: o.configVersion, framework: "experiment",
          startFields: { experiment_id: experiment.id, dataset_item_id: item.id, repetition },
        },
        (run) => o.task(item.input, { item, repetition, experimentId: experiment.id, run }),
      );
    } catch (err) {
      taskErrors.push({ itemId: item.id, repetition, message: message(err) });
      return;
    }
    const args: EvaluatorArgs = { input: item.input, output, expectedOutput: item.expected_output, metadata: item.metadata, item };
    for (const evaluator of evaluators) {
      const name = typeof evaluator === "function" ? evaluator.name || "score" : evaluator.name;
      try {
        const result = await (typeof evaluator === "function" ? evaluator(args) : evaluator.evaluate(args));
        for (const s of scoresOf(evaluator, result)) {
          scores.push({ sdkRunId, name: s.name, value: s.value, comment: s.comment });
          scoredBy.push({ itemId: item.id, repetition, evaluator: name });
        }
      } catch (err) {
        evaluatorErrors.push({ itemId: item.id, repetition, evaluator: name, message: message(err) });
      }
    }
  };

  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < work.length) await runOne(work[next++]!);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.maxConcurrency ?? 8, work.length || 1)) }, worker));
  for (const { index, message: why } of await postScores(host, scores)) evaluatorErrors.push({ ...scoredBy[index]!, message: why });
  await call(host, "POST", `/api/experiments/${experiment.id}/complete`, {});

  // The runs pass through the server's pipeline: wait (bounded) until every run this call started is stored as
  // ended. (A count would not do: a resumed experiment's count is complete before its re-runs are stored.)
  const deadline = Date.now() + (o.resultsTimeoutMs ?? 30_000);
  let final: { experiment: ServerExperiment; items: ExperimentItemResult[] };
  for (;;) {
    final = await call(host, "GET", `/api/experiments/${experiment.id}`);
    const ended = new Set(final.items.filter((i) => i.status === "success" || i.status === "error").map((i) => i.sdk_run_id));
    if (started.every((id) => ended.has(id)) || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const e = final.experiment;
  return {
    experimentId: e.id, name: e.name, dataset: e.dataset, datasetVersion: e.dataset_version,
    url: `${host.baseUrl}/datasets/${encodeURIComponent(e.dataset)}/compare?experiments=${e.id}`,
    ran: work.length, skipped, completedCount: e.completed_count, errorCount: e.error_count, scores: e.scores, costUsd: e.cost_usd,
    latencyMs: e.latency_ms, taskErrors, evaluatorErrors, items: final.items,
  };
}

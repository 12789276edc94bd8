/**
 * Server-side evaluators (docs/EVALUATION.md): list the project's evaluators, run one on a run (or a span of it) or on
 * a dataset item with an output — the playground's call: the rendered prompt, the judge's raw answer, the score and
 * its cost, nothing stored — and attach evaluators to an experiment, so its runs are judged as they end.
 */
import { call, type ApiHost } from "./api-call.js";
import { RunwatchError } from "./errors.js";
import type { ScoreValue } from "./scores.js";

export interface ServerEvaluator {
  id: string;
  name: string;
  description: string;
  type: "llm_judge" | "builtin";
  version: number;
  score_name: string;
  output: { type: "numeric"; min: number; max: number } | { type: "boolean" } | { type: "categorical"; categories: string[] };
  provider?: string | null;
  model?: string | null;
  prompt?: string;
  check?: Record<string, unknown>;
}

export interface EvaluatorRun {
  prompt: string | null;
  raw_answer: string | null;
  score: { name: string; value: ScoreValue; comment: string } | null;
  /** Why there is no score: the judge's answer did not fit (malformed_answer), nothing to judge, the provider failed. */
  error: { code: string; message: string } | null;
  provider: string | null;
  model: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
  duration_ms: number;
}

export type EvaluatorTarget = { sdkRunId: string; spanId?: string } | { dataset: string; itemId: string; output?: unknown };

export async function listEvaluators(host: ApiHost): Promise<ServerEvaluator[]> {
  return (await call<{ evaluators: ServerEvaluator[] }>(host, "GET", "/api/evaluators")).evaluators;
}

/** The evaluator named `nameOrId` (its name, or its id). */
export async function findServerEvaluator(host: ApiHost, nameOrId: string): Promise<ServerEvaluator> {
  const found = (await listEvaluators(host)).find((e) => e.id === nameOrId || e.name === nameOrId);
  if (!found) throw new RunwatchError("http", `no evaluator named ${JSON.stringify(nameOrId)} in this project`, { status: 404 });
  return found;
}

export async function runEvaluator(host: ApiHost, nameOrId: string, target: EvaluatorTarget): Promise<EvaluatorRun> {
  const evaluator = await findServerEvaluator(host, nameOrId);
  const body = "sdkRunId" in target
    ? { sdk_run_id: target.sdkRunId, ...(target.spanId ? { span_id: target.spanId } : {}) }
    : { dataset: target.dataset, item_id: target.itemId, ...("output" in target ? { output: target.output } : {}) };
  return call<EvaluatorRun>(host, "POST", `/api/evaluators/${evaluator.id}/try`, body);
}

/** Rules that judge every run of an experiment as it ends, one per evaluator; an experiment resumed keeps its rules. */
export async function attachEvaluators(host: ApiHost, experiment: { id: string; name: string }, namesOrIds: readonly string[]): Promise<{ evaluator: string; ruleId: string | null }[]> {
  const out: { evaluator: string; ruleId: string | null }[] = [];
  for (const nameOrId of namesOrIds) {
    const e = await findServerEvaluator(host, nameOrId);
    const body = { evaluator_id: e.id, name: `experiment ${experiment.id}: ${e.name}`.slice(0, 200), filter: { experiment_id: experiment.id }, sampling: 1 };
    try {
      out.push({ evaluator: e.name, ruleId: (await call<{ rule: { id: string } }>(host, "POST", "/api/evaluation-rules", body, 201)).rule.id });
    } catch (err) {
      if (!(err instanceof RunwatchError && err.details.status === 409)) throw err;
      out.push({ evaluator: e.name, ruleId: null }); // attached when the experiment first ran
    }
  }
  return out;
}

/**
 * The playground's call (POST /api/evaluators/{id}/try and the /evaluators/{id} page): an evaluator — saved, or a
 * draft definition — applied to one of the project's runs (or a span of it), or to a dataset item's input and
 * expected output with a given output. Nothing is stored but the judge's cost, which counts against the project's
 * daily budget like any judge call: a judge is tried within the project's caps, as the evaluation worker's are
 * (evaluation/judging/judge-caps.ts: its calls per minute, its budget reserved before the call), and on the
 * operator's keys only when the operator allows the project that (RUNWATCH_OPERATOR_JUDGE_KEY).
 */
import { callJudge } from "../../core/agents/client.js";
import { serviceDefaults } from "../../core/agents/judge-estimate.js";
import { resolveAgentSecret } from "../../core/agents/secret.js";
import { AuthError, Conflict, NotFound, RateLimited, ValidationError } from "../../core/errors.js";
import type { EvaluationSubject } from "../model/subject.js";
import { datasetNamed, readItemsWithIds } from "../../stores/datasets/datasets.js";
import type { EvaluatorDefinition } from "../model/definition.js";
import { evaluate, type EvaluationOutcome, type JudgeCall } from "./evaluate.js";
import { BUDGET_SPENT, RATE_LIMITED, cappedJudge } from "./judge-caps.js";
import { evaluationLimits } from "../../stores/evaluation/spend.js";
import { runSubject } from "./subjects.js";
import { projectJudge } from "./project-judge.js";
import { providerKeySealer } from "../../stores/evaluation/provider-keys.js";
import type { EvaluationDeps } from "../deps.js";

let secret: Promise<string> | undefined;
let defaults: ReturnType<typeof serviceDefaults> | undefined;
/** The judge through agents-service, as the evaluation worker asks it. */
export function webJudge(deps: EvaluationDeps): JudgeCall {
  return async (req) => callJudge(deps.ports.config, await (secret ??= resolveAgentSecret(deps.ports.config)), req, { timeoutMs: 60_000 });
}

export type TryTarget =
  | { readonly sdk_run_id: string; readonly span_id?: string }
  | { readonly dataset: string; readonly item_id: string; readonly output?: unknown };

export function parseTryTarget(body: Record<string, unknown>): TryTarget {
  if (typeof body.sdk_run_id === "string" && body.sdk_run_id !== "") {
    if (body.span_id !== undefined && typeof body.span_id !== "string") throw new ValidationError({ field: "span_id", message: "span_id must be a span id" });
    return { sdk_run_id: body.sdk_run_id, ...(body.span_id ? { span_id: body.span_id as string } : {}) };
  }
  if (typeof body.dataset === "string" && typeof body.item_id === "string") return { dataset: body.dataset, item_id: body.item_id, ...("output" in body ? { output: body.output } : {}) };
  throw new ValidationError({ field: "sdk_run_id", message: "name what to judge: sdk_run_id (and span_id), or dataset and item_id (and the output to judge)" });
}

async function subjectOf(deps: EvaluationDeps, projectId: number, def: EvaluatorDefinition, target: TryTarget): Promise<EvaluationSubject> {
  if ("sdk_run_id" in target) {
    const run = await deps.events.getRun(projectId, target.sdk_run_id);
    if (!run) throw new NotFound({ resource: "run", message: `run ${JSON.stringify(target.sdk_run_id)} not found` });
    return runSubject({ events: deps.events, sql: deps.ports.sql }, run, { ...(target.span_id ? { spanId: target.span_id } : {}), evaluator: def });
  }
  const dataset = await datasetNamed(deps.ports.sql, projectId, target.dataset);
  const [item] = await readItemsWithIds(deps.ports.sql, dataset, dataset.version, [target.item_id]);
  if (!item) throw new NotFound({ resource: "dataset item", message: `dataset ${JSON.stringify(target.dataset)} has no item ${JSON.stringify(target.item_id)}` });
  return {
    input: item.input, output: target.output, ...(item.expected_output !== null ? { expected_output: item.expected_output } : {}),
    error: "", metadata: item.metadata, spans: new Map(), status: "success", duration_ms: null, cost_usd: 0,
  };
}

export async function tryEvaluator(deps: EvaluationDeps, projectId: number, def: EvaluatorDefinition, target: TryTarget, judge: JudgeCall = webJudge(deps)): Promise<EvaluationOutcome> {
  const subject = await subjectOf(deps, projectId, def, target);
  if (def.type !== "llm_judge") return evaluate(def, subject, judge);
  const { sql, config, limiter } = deps.ports;
  const capped = cappedJudge({ sql, limiter, logger: deps.logger, caps: config.evaluationCaps, defaults: (defaults ??= serviceDefaults(config)) }, projectId, judge);
  const operator = { operatorJudgeKey: config.operatorJudgeKey, adminEmails: config.adminEmails };
  const outcome = await evaluate(def, subject, await projectJudge({ sql, sealer: providerKeySealer(deps.sessionSecret), operator }, projectId, capped));
  // Refusals before any provider call are the request's errors, not an evaluation's.
  const e = outcome.error;
  if (e?.code === "operator_key_not_allowed") throw new AuthError({ code: "forbidden", message: e.message });
  if (e?.code === BUDGET_SPENT) throw new Conflict({ code: BUDGET_SPENT, message: e.message });
  if (e?.code === RATE_LIMITED) {
    const { calls_per_minute } = await evaluationLimits(sql, projectId, config.evaluationCaps);
    throw new RateLimited({ limit: calls_per_minute, unit: "judge calls", remaining: 0, retryAfterMs: (e.retry_after_s ?? 60) * 1000 });
  }
  return outcome;
}

/** The playground's answer: what was asked, what came back, the score it makes (or why none), what it cost. */
export const tryJson = (def: EvaluatorDefinition, o: EvaluationOutcome) => ({
  prompt: o.prompt,
  raw_answer: o.raw_answer,
  score: o.verdict ? { name: def.score_name, value: o.verdict.value, comment: o.verdict.explanation } : null,
  error: o.error ? { code: o.error.code, message: o.error.message } : null,
  provider: o.provider,
  model: o.model,
  prompt_tokens: o.prompt_tokens,
  completion_tokens: o.completion_tokens,
  cost_usd: o.cost_usd,
  duration_ms: o.duration_ms,
});

/**
 * The prompts playground's completions (agents-service POST /complete) under the rules of a project's judge calls:
 * the project's own provider key when it has one, the operator's only when the operator allows the project
 * (project-judge.ts), and always within the project's caps (judge-caps.ts: its calls per minute, its daily budget with
 * the most the call may cost reserved before it is made). A completion passes through those as a judge call of the
 * same size — its messages as the prompt, its max_tokens as the answer limit — so one set of rules bounds every
 * provider call the dashboard makes on a project's behalf, and the playground can never spend uncapped.
 */
import { callComplete, isAgentsFailure, type AgentsFailure } from "../../core/agents/client.js";
import type { CompleteRequest, CompleteResponse, JudgeRequest } from "../../core/agents/contract.js";
import { serviceDefaults } from "../../core/agents/judge-estimate.js";
import { resolveAgentSecret } from "../../core/agents/secret.js";
import { AuthError, Conflict, RateLimited } from "../../core/errors.js";
import type { EvaluationDeps } from "../deps.js";
import type { JudgeCall } from "./evaluate.js";
import { BUDGET_SPENT, RATE_LIMITED, cappedJudge } from "./judge-caps.js";
import { projectJudge } from "./project-judge.js";
import { evaluationLimits } from "../../stores/evaluation/spend.js";
import { providerKeySealer } from "../../stores/evaluation/provider-keys.js";

export type CompleteCall = (req: CompleteRequest) => Promise<CompleteResponse | AgentsFailure>;

/** How long the web waits for one completion: agents-service's own provider timeout and retries end before it. */
const COMPLETE_TIMEOUT_MS = 120_000;

let secret: Promise<string> | undefined;
let defaults: ReturnType<typeof serviceDefaults> | undefined;

/** agents-service's POST /complete, as web asks it. */
export function webComplete(deps: EvaluationDeps): CompleteCall {
  return async (req) => callComplete(deps.ports.config, await (secret ??= resolveAgentSecret(deps.ports.config)), req, { timeoutMs: COMPLETE_TIMEOUT_MS });
}

/**
 * `call` with the project's keys and caps. A refusal before any provider call is thrown as the request's error
 * (403 the operator's key is not the project's to use, 409 the budget is spent, 429 the calls per minute are used
 * up); the provider's own failures come back as an AgentsFailure for the caller to show.
 */
export function projectCompletion(deps: EvaluationDeps, projectId: number, call: CompleteCall = webComplete(deps)): CompleteCall {
  const { sql, config, limiter } = deps.ports;
  return async (req) => {
    const asJudge: JudgeCall = async (j) => {
      const r = await call({ ...req, ...(j.provider ? { provider: j.provider } : {}), ...(j.model ? { model: j.model } : {}), ...(j.connection ? { connection: j.connection } : {}) });
      if (isAgentsFailure(r)) return r;
      return { provider: r.provider, model: r.model, answer: r.text, raw_answer: r.text, usage: r.usage, attempts: r.attempts, duration_ms: r.duration_ms };
    };
    const sized: JudgeRequest = {
      ...(req.provider ? { provider: req.provider } : {}),
      ...(req.model ? { model: req.model } : {}),
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
      ...(req.max_tokens !== undefined ? { max_tokens: req.max_tokens } : {}),
      system: req.messages.map((m) => m.content).join("\n"),
      user: "",
      output: { name: "text", description: "", schema: {} },
    };
    const capped = cappedJudge({ sql, limiter, logger: deps.logger, caps: config.evaluationCaps, defaults: (defaults ??= serviceDefaults(config)) }, projectId, asJudge);
    const operator = { operatorJudgeKey: config.operatorJudgeKey, adminEmails: config.adminEmails };
    const keyed = await projectJudge({ sql, sealer: providerKeySealer(deps.sessionSecret), operator }, projectId, capped);
    const answer = await keyed(sized);
    if (!isAgentsFailure(answer)) {
      return { provider: answer.provider, model: answer.model, text: String(answer.raw_answer), usage: answer.usage, attempts: answer.attempts, duration_ms: answer.duration_ms };
    }
    if (answer.code === "operator_key_not_allowed") throw new AuthError({ code: "forbidden", message: answer.message.replace("judges", "playground and judges") });
    if (answer.code === BUDGET_SPENT) throw new Conflict({ code: BUDGET_SPENT, message: answer.message });
    if (answer.code === RATE_LIMITED) {
      const { calls_per_minute } = await evaluationLimits(sql, projectId, config.evaluationCaps);
      throw new RateLimited({ limit: calls_per_minute, unit: "judge calls", remaining: 0, retryAfterMs: (answer.retry_after_s ?? 60) * 1000 });
    }
    return answer;
  };
}

/**
 * A project's caps around each of its judge calls (docs/EVALUATION.md, Caps), the same for the playground and the
 * evaluation worker: the calls per minute (one named budget on the rate-limiter port, kept per project whatever the
 * cap: memory embedded, Redis in scale mode), then the daily budget — the most the call may cost is reserved before
 * it is made (core/agents/judge-estimate.ts) and replaced by its real cost when it answers (stores/evaluation/spend.ts).
 * A call the caps refuse is not made: it comes back as a failure the caller turns into a 429/409 (the playground) or
 * a job held without an attempt counted (the worker).
 */
import { isAgentsFailure, type AgentsFailure } from "../../core/agents/client.js";
import { judgeCallCeiling, judgeTarget, type ServiceDefaults } from "../../core/agents/judge-estimate.js";
import type { Logger } from "../../core/logger.js";
import type { RateDecision, RateLimiter } from "../../core/ports/rate-limiter.js";
import type { Sql } from "../../core/ports/sql.js";
import type { JudgeCall } from "./evaluate.js";
import { evaluationLimits, msUntilTomorrow, reserveEvaluationSpend, settleEvaluationSpend, type EvaluationCeiling } from "../../stores/evaluation/spend.js";

/** The rate-limiter budget of judge calls, keyed `project:<id>`; its cap is each call's project's calls_per_minute. */
export const JUDGE_CALLS_BUDGET = "evaluation.calls";
export const RATE_LIMITED = "evaluation_rate_limited";
export const BUDGET_SPENT = "evaluation_budget_spent";
/** How long a call that the budget's remainder cannot cover waits: reservations of calls under way may be handed back. */
const REMAINDER_RETRY_S = 120;

export interface JudgeCapsDeps {
  readonly sql: Sql;
  readonly limiter: RateLimiter;
  /** The instance's caps (config.evaluationCaps): the ceiling of every project's. */
  readonly caps: EvaluationCeiling;
  /** agents-service's default provider and models, to price a call that names neither (serviceDefaults). */
  readonly defaults: () => Promise<ServiceDefaults | AgentsFailure>;
  readonly logger: Pick<Logger, "error">;
}

const NO_DEFAULTS: ServiceDefaults = { provider: null, models: {} };

export function cappedJudge(deps: JudgeCapsDeps, projectId: number, judge: JudgeCall): JudgeCall {
  return async (req) => {
    const limits = await evaluationLimits(deps.sql, projectId, deps.caps);
    const budget = limits.daily_budget_usd;
    const spent = (): AgentsFailure => ({
      status: 409, code: BUDGET_SPENT, retry_after_s: Math.ceil(msUntilTomorrow() / 1000),
      message: `the project's daily evaluation budget ($${budget}) is spent; it renews at 00:00 UTC`,
    });
    if (budget !== null && limits.spent_today_usd >= budget) return spent();
    const defaults = req.provider && req.model ? NO_DEFAULTS : await deps.defaults();
    if (isAgentsFailure(defaults)) return defaults;
    const target = judgeTarget({ provider: req.provider, model: req.model, ownKey: req.connection !== undefined }, defaults);
    const ceiling = target ? judgeCallCeiling(req, target) : 0;

    const rate = await callsPerMinute(deps, projectId, limits.calls_per_minute);
    if (!rate.allowed) {
      return {
        status: 429, code: RATE_LIMITED, retry_after_s: Math.max(1, Math.ceil(rate.resetMs / 1000)),
        message: `the project's judge calls per minute (${limits.calls_per_minute}) are used up; retry in ${Math.max(1, Math.ceil(rate.resetMs / 1000))} s`,
      };
    }
    if (!(await reserveEvaluationSpend(deps.sql, projectId, ceiling, budget))) {
      const left = budget === null ? 0 : budget - (await evaluationLimits(deps.sql, projectId, deps.caps)).spent_today_usd;
      if (left <= 0) return spent();
      return {
        status: 409, code: BUDGET_SPENT, retry_after_s: REMAINDER_RETRY_S,
        message: `the project's daily evaluation budget ($${budget}) has $${round(left)} left with the calls under way, less than a call of ${target?.model ?? "the model"} may cost ($${round(ceiling)}); it renews at 00:00 UTC`,
      };
    }
    let answer: Awaited<ReturnType<JudgeCall>>;
    try {
      answer = await judge(req);
    } catch (err) {
      await settleEvaluationSpend(deps.sql, projectId, ceiling, 0, false);
      throw err;
    }
    if (isAgentsFailure(answer)) await settleEvaluationSpend(deps.sql, projectId, ceiling, 0, false);
    else await settleEvaluationSpend(deps.sql, projectId, ceiling, answer.usage.cost_usd ?? 0, true);
    return answer;
  };
}

/**
 * One point of the project's calls-per-minute budget. A limiter that fails lets the call pass, logged, as every
 * throttle does (docs/SECURITY.md): the daily budget, in Postgres, still bounds what it spends.
 */
async function callsPerMinute(deps: JudgeCapsDeps, projectId: number, cap: number): Promise<RateDecision> {
  try {
    return await deps.limiter.budget(JUDGE_CALLS_BUDGET, cap, 60).consume(`project:${projectId}`);
  } catch (err) {
    deps.logger.error("the judge calls' rate limiter failed; the call is let through", { project_id: projectId, err });
    return { allowed: true, limit: cap, remaining: 0, resetMs: 0 };
  }
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

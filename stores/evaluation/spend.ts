/**
 * A project's caps on its judges (docs/EVALUATION.md, Caps): a daily spend in USD and a number of judge calls per
 * minute (project_settings, migration 109). The instance's RUNWATCH_EVALUATION_DAILY_BUDGET_USD and
 * RUNWATCH_EVALUATION_CALLS_PER_MINUTE (config.evaluationCaps) are each project's default and its ceiling: a project may lower its caps,
 * never raise them past the instance's (a PUT above is a 422 naming the field and the ceiling; a cap saved before
 * the operator lowered the ceiling counts as the ceiling).
 *
 * What judges cost is added per day (evaluation_spend). Each call first reserves the most it may cost, in one
 * statement that admits it only while what is spent and reserved, with it, stays within the budget; its real cost
 * replaces the reservation when it answers (evaluation/judging/judge-caps.ts). So calls made at once cannot pass the
 * budget together; a call that dies before it answers leaves its reservation counted for the day.
 */
import { ValidationError } from "../../core/errors.js";
import type { Sql } from "../../core/ports/sql.js";
import { audit } from "../accounts/projects.js";

export interface EvaluationLimits {
  /** null: no daily cap. */
  readonly daily_budget_usd: number | null;
  readonly calls_per_minute: number;
}

/** The instance's caps (config.evaluationCaps): every project's default and ceiling. */
export type EvaluationCeiling = Readonly<{ daily_budget_usd: number; calls_per_minute: number }>;

const today = () => new Date().toISOString().slice(0, 10);

/** The project's caps in force (its own, within the instance's) and what it spent (and has reserved) today. */
export async function evaluationLimits(sql: Sql, projectId: number, ceiling: EvaluationCeiling): Promise<EvaluationLimits & { spent_today_usd: number }> {
  const [row] = await sql.query<Record<string, unknown>>(
    `SELECT s.evaluation_daily_budget_usd AS budget, s.evaluation_calls_per_minute AS calls,
            (SELECT cost_usd FROM evaluation_spend WHERE project_id = $1 AND day = $2) AS spent
       FROM (SELECT 1) one LEFT JOIN project_settings s ON s.project_id = $1`,
    [projectId, today()],
  );
  const own = (v: unknown) => (v === null || v === undefined ? undefined : Number(v));
  const budget = own(row?.budget);
  const calls = own(row?.calls);
  return {
    daily_budget_usd: Math.min(budget ?? Infinity, ceiling.daily_budget_usd),
    calls_per_minute: Math.min(calls ?? Infinity, ceiling.calls_per_minute),
    spent_today_usd: Number(row?.spent ?? 0),
  };
}

/**
 * Reserves `usd` of today's budget for a judge call about to be made: admitted while what is spent and reserved is
 * below the budget and stays within it with this call. Returns false, reserving nothing, when it does not fit.
 */
export async function reserveEvaluationSpend(sql: Sql, projectId: number, usd: number, budget: number | null): Promise<boolean> {
  const cost = Number.isFinite(usd) && usd > 0 ? usd : 0;
  if (budget !== null && (budget <= 0 || cost > budget)) return false;
  const rows = await sql.query(
    `INSERT INTO evaluation_spend (project_id, day, cost_usd, calls) VALUES ($1, $2, $3, 0)
     ON CONFLICT (project_id, day) DO UPDATE SET cost_usd = evaluation_spend.cost_usd + EXCLUDED.cost_usd
      WHERE $4::double precision IS NULL
         OR (evaluation_spend.cost_usd < $4::double precision AND evaluation_spend.cost_usd + EXCLUDED.cost_usd <= $4::double precision)
     RETURNING cost_usd`,
    [projectId, today(), cost, budget],
  );
  return rows.length > 0;
}

/** Replaces a call's reservation with what it cost (0 when it made no provider call), and counts the call if it made one. */
export async function settleEvaluationSpend(sql: Sql, projectId: number, reservedUsd: number, costUsd: number, called: boolean): Promise<void> {
  const cost = Number.isFinite(costUsd) && costUsd > 0 ? costUsd : 0;
  const reserved = Number.isFinite(reservedUsd) && reservedUsd > 0 ? reservedUsd : 0;
  await sql.query(
    `INSERT INTO evaluation_spend (project_id, day, cost_usd, calls) VALUES ($1, $2, greatest($3::double precision, 0), $4)
     ON CONFLICT (project_id, day) DO UPDATE SET cost_usd = greatest(evaluation_spend.cost_usd + $3::double precision, 0), calls = evaluation_spend.calls + $4`,
    [projectId, today(), cost - reserved, called ? 1 : 0],
  );
}

const money = (x: number) => `$${x}`;

/**
 * Sets a project's caps (PUT /api/evaluation-settings); null goes back to the instance's. Above the instance's
 * ceiling is refused, naming it. Recorded in the project's audit log.
 */
export async function setEvaluationLimits(sql: Sql, projectId: number, userId: number | null, body: unknown, ceiling: EvaluationCeiling): Promise<void> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new ValidationError({ message: 'the body must be a JSON object like {"daily_budget_usd": 5, "calls_per_minute": 60}' });
  const b = body as Record<string, unknown>;
  const budget = b.daily_budget_usd ?? null;
  if (budget !== null && (typeof budget !== "number" || !Number.isFinite(budget) || budget < 0)) throw new ValidationError({ field: "daily_budget_usd", message: "daily_budget_usd must be a number of dollars of at least 0, or null for the default" });
  if (budget !== null && budget > ceiling.daily_budget_usd) {
    throw new ValidationError({ field: "daily_budget_usd", message: `daily_budget_usd may be at most this instance's ${money(ceiling.daily_budget_usd)} a day (RUNWATCH_EVALUATION_DAILY_BUDGET_USD): a project may lower it, not raise it` });
  }
  const calls = b.calls_per_minute ?? null;
  if (calls !== null && (!Number.isInteger(calls) || (calls as number) < 1)) throw new ValidationError({ field: "calls_per_minute", message: `calls_per_minute must be a whole number from 1 to ${ceiling.calls_per_minute}, or null for the default` });
  if (calls !== null && (calls as number) > ceiling.calls_per_minute) {
    throw new ValidationError({ field: "calls_per_minute", message: `calls_per_minute may be at most this instance's ${ceiling.calls_per_minute} (RUNWATCH_EVALUATION_CALLS_PER_MINUTE): a project may lower it, not raise it` });
  }
  await sql.query(
    `INSERT INTO project_settings (project_id, evaluation_daily_budget_usd, evaluation_calls_per_minute, updated_at) VALUES ($1, $2, $3, now())
     ON CONFLICT (project_id) DO UPDATE SET evaluation_daily_budget_usd = $2, evaluation_calls_per_minute = $3, updated_at = now()`,
    [projectId, budget, calls],
  );
  await audit(sql, projectId, userId, "evaluation.caps", "", { daily_budget_usd: budget, calls_per_minute: calls });
}

/** Milliseconds until the next UTC day, when a spent daily budget is new again. */
export const msUntilTomorrow = (now = new Date()): number => Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime();

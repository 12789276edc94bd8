/**
 * A project's caps on its judges (docs/EVALUATION.md, Caps): a daily spend in USD and a number of judge calls per
 * minute (project_settings, migration 109; unset, the instance's defaults RUNWATCH_EVALUATION_DAILY_BUDGET_USD and
 * RUNWATCH_EVALUATION_CALLS_PER_MINUTE). What judges cost is added per day (evaluation_spend). The spend is checked
 * before each call, so the cap can be passed by at most the cost of the calls already under way.
 */
import { ValidationError } from "../../core/errors.js";
import type { Sql } from "../../core/ports/sql.js";

export interface EvaluationLimits {
  /** null: no daily cap. */
  readonly daily_budget_usd: number | null;
  readonly calls_per_minute: number;
}

export const MAX_CALLS_PER_MINUTE = 100_000;

export function defaultLimits(env: NodeJS.ProcessEnv = process.env): EvaluationLimits {
  const budget = env.RUNWATCH_EVALUATION_DAILY_BUDGET_USD;
  const calls = Number(env.RUNWATCH_EVALUATION_CALLS_PER_MINUTE ?? 600);
  return {
    daily_budget_usd: budget === undefined || budget === "" ? 10 : Number(budget) >= 0 ? Number(budget) : 10,
    calls_per_minute: Number.isInteger(calls) && calls > 0 ? calls : 600,
  };
}

const today = () => new Date().toISOString().slice(0, 10);

export async function evaluationLimits(sql: Sql, projectId: number, defaults = defaultLimits()): Promise<EvaluationLimits & { spent_today_usd: number }> {
  const [row] = await sql.query<Record<string, unknown>>(
    `SELECT s.evaluation_daily_budget_usd AS budget, s.evaluation_calls_per_minute AS calls,
            (SELECT cost_usd FROM evaluation_spend WHERE project_id = $1 AND day = $2) AS spent
       FROM (SELECT 1) one LEFT JOIN project_settings s ON s.project_id = $1`,
    [projectId, today()],
  );
  return {
    daily_budget_usd: row?.budget === null || row?.budget === undefined ? defaults.daily_budget_usd : Number(row.budget),
    calls_per_minute: row?.calls === null || row?.calls === undefined ? defaults.calls_per_minute : Number(row.calls),
    spent_today_usd: Number(row?.spent ?? 0),
  };
}

export async function addEvaluationSpend(sql: Sql, projectId: number, costUsd: number): Promise<void> {
  const cost = Number.isFinite(costUsd) && costUsd > 0 ? costUsd : 0;
  await sql.query(
    `INSERT INTO evaluation_spend (project_id, day, cost_usd, calls) VALUES ($1, $2, $3, 1)
     ON CONFLICT (project_id, day) DO UPDATE SET cost_usd = evaluation_spend.cost_usd + EXCLUDED.cost_usd, calls = evaluation_spend.calls + 1`,
    [projectId, today(), cost],
  );
}

/** Sets a project's caps (PUT /api/evaluation-settings); null goes back to the instance's default. */
export async function setEvaluationLimits(sql: Sql, projectId: number, body: unknown): Promise<void> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new ValidationError({ message: 'the body must be a JSON object like {"daily_budget_usd": 5, "calls_per_minute": 60}' });
  const b = body as Record<string, unknown>;
  const budget = b.daily_budget_usd ?? null;
  if (budget !== null && (typeof budget !== "number" || !Number.isFinite(budget) || budget < 0)) throw new ValidationError({ field: "daily_budget_usd", message: "daily_budget_usd must be a number of dollars of at least 0, or null for the default" });
  const calls = b.calls_per_minute ?? null;
  if (calls !== null && (!Number.isInteger(calls) || (calls as number) < 1 || (calls as number) > MAX_CALLS_PER_MINUTE)) throw new ValidationError({ field: "calls_per_minute", message: `calls_per_minute must be a whole number from 1 to ${MAX_CALLS_PER_MINUTE}, or null for the default` });
  await sql.query(
    `INSERT INTO project_settings (project_id, evaluation_daily_budget_usd, evaluation_calls_per_minute, updated_at) VALUES ($1, $2, $3, now())
     ON CONFLICT (project_id) DO UPDATE SET evaluation_daily_budget_usd = $2, evaluation_calls_per_minute = $3, updated_at = now()`,
    [projectId, budget, calls],
  );
}

/** Milliseconds until the next UTC day, when a spent daily budget is new again. */
export const msUntilTomorrow = (now = new Date()): number => Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime();

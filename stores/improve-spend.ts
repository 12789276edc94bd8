/**
 * The operator's daily LLM spend on /improve (RUNWATCH_IMPROVE_DAILY_BUDGET_USD): checked before a call, added
 * after it. Calls already under way when the cap is reached still finish, so the cap can be passed by at most
 * the cost of the calls in flight.
 */
import type { Sql } from "../core/ports/sql.js";

const today = () => new Date().toISOString().slice(0, 10);

export async function spentToday(sql: Sql): Promise<number> {
  const [row] = await sql.query<{ cost_usd: string | number }>("SELECT cost_usd FROM improve_spend WHERE day = $1", [today()]);
  return Number(row?.cost_usd ?? 0);
}

export async function addSpend(sql: Sql, costUsd: number): Promise<void> {
  const cost = Number.isFinite(costUsd) && costUsd > 0 ? costUsd : 0;
  await sql.query(
    `INSERT INTO improve_spend (day, cost_usd, calls) VALUES ($1, $2, 1)
     ON CONFLICT (day) DO UPDATE SET cost_usd = improve_spend.cost_usd + EXCLUDED.cost_usd, calls = improve_spend.calls + 1`,
    [today(), cost],
  );
}

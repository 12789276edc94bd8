/**
 * GET /costs: spend per day (inline SVG bar chart) and per agent and model over a chosen range.
 * The range is a query parameter (?days=7|30|90) so range pickers and CSV export can build on it.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { SessionUser, WebDeps } from "../deps.js";
import { requireUser } from "../auth/session.js";
import { queryParam, renderPage } from "./render.js";
import { costByAgentAndModel, costPerDay } from "./run-stats.js";
import { barChart } from "./bar-chart.js";

export const RANGES = [7, 30, 90] as const;

export function register(router: Router, deps: WebDeps): void {
  router.get("/costs", requireUser, async (ctx: Context) => {
    const user = ctx.state.user as SessionUser;
    const asked = Number(queryParam(ctx, "days"));
    const days = (RANGES as readonly number[]).includes(asked) ? asked : 30;
    const [daily, byAgentModel] = await Promise.all([
      costPerDay(deps.ports.clickhouse, user.id, days),
      costByAgentAndModel(deps.ports.clickhouse, user.id, days),
    ]);
    const totals = daily.reduce(
      (t, d) => ({ cost_usd: t.cost_usd + d.cost_usd, runs: t.runs + d.runs, total_tokens: t.total_tokens + d.total_tokens }),
      { cost_usd: 0, runs: 0, total_tokens: 0 },
    );
    renderPage(ctx, "costs.njk", {
      title: "Costs",
      days,
      ranges: RANGES,
      daily,
      chart: barChart(daily.map((d) => ({ label: d.day, value: d.cost_usd, detail: `${d.runs} runs` }))),
      by_agent_model: byAgentModel,
      totals,
      avg_per_run: totals.runs ? totals.cost_usd / totals.runs : 0,
    });
  });
}

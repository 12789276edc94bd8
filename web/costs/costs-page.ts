/**
 * GET /costs?from=YYYY-MM-DD&to=YYYY-MM-DD (or ?days=7|30|90): spend and tokens per day (bar chart), per
 * agent, per model and per agent × model for the range, which part of the spend was computed from the price
 * table, and each budgeted agent's spend this month against its budget. The LLM judge's calls are evaluation spend,
 * shown apart (its total and per model) and in none of the agents' figures.
 * GET /costs.csv?from&to: the same range as CSV, one row per (day, agent, model).
 * Aggregates: stores/runs/costs.ts (one grouped scan of run_costs per page).
 */
import { budgetedAgents } from "../../stores/agent-registry.js";
import type Router from "@koa/router";
import type { Context } from "koa";
import type { WebDeps } from "../deps.js";
import { projectOfRequest } from "../auth/project.js";
import { queryParam, renderPage } from "../common/render.js";
import { barChart } from "../common/bar-chart.js";
import {
  agentModelKey, agentMonthSpend, costGroups, costRunCounts, parseRange, perDay, rollUp, splitEvaluation, totalOf, withRunCounts, type CostRange,
} from "../../stores/runs/costs.js";
import { JUDGE_AGENT } from "../../core/events/judge-runs.js";
import { mountPages } from "../route-table.js";

export const RANGES = [7, 30, 90] as const;

function rangeOf(ctx: Context, now = new Date()): CostRange & { error?: string } {
  const days = Number(queryParam(ctx, "days"));
  if (!queryParam(ctx, "from") && !queryParam(ctx, "to") && (RANGES as readonly number[]).includes(days)) return parseRange(undefined, undefined, days, now);
  return parseRange(queryParam(ctx, "from"), queryParam(ctx, "to"), 30, now);
}

/** Budgeted agents (Postgres) with their spend this month (ClickHouse), most used budget first. */
async function budgets(deps: WebDeps, userId: number) {
  const agents = await budgetedAgents(deps.ports.sql, userId);
  if (agents.length === 0) return [];
  const spend = await agentMonthSpend(deps.ports.clickhouse, userId, agents.map((a) => a.name));
  return agents
    .map((a) => {
      const budget = Number(a.budget_usd);
      const spent = spend.get(a.name) ?? 0;
      const pct = budget > 0 ? (spent / budget) * 100 : spent > 0 ? Infinity : 0;
      return {
        name: a.name, budget_usd: budget, spent_usd: spent, pct,
        bar_pct: Math.min(100, pct), pct_label: Number.isFinite(pct) ? `${pct.toFixed(1)}%` : "over (budget $0)", remaining_usd: Math.max(0, budget - spent), level: pct >= 100 ? "over" : pct >= 80 ? "warn" : "ok" };
    })
    .sort((a, b) => b.pct - a.pct || a.name.localeCompare(b.name));
}

const csvCell = (v: string | number): string => {
  const s = String(v);
  // Quote when needed; neutralise spreadsheet formulas in names (CSV injection).
  const safe = /^[=+\-@\t\r]/.test(s) && typeof v === "string" ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
};

export function registerCostsPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: { "GET /costs": costsPage, "GET /costs.csv": costsCsv },
  });
}

/** GET /costs: the range's spend by day, agent and model, the judge's apart, and the month's budgets. */
async function costsPage(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  const range = rangeOf(ctx);
  const [all, counts, budgetRows] = await Promise.all([
    costGroups(deps.ports.clickhouse, project.id, range), costRunCounts(deps.ports.clickhouse, project.id, range), budgets(deps, project.id),
  ]);
  const { production: groups, evaluation } = splitEvaluation(all);
  const daily = withRunCounts(perDay(groups, range).map((d) => ({ ...d, key: d.day })), counts, "day");
  const totals = withRunCounts([{ ...totalOf(groups), key: "" }], counts, "total")[0]!;
  const quick = RANGES.map((d) => ({ days: d, ...parseRange(undefined, undefined, d) }));
  renderPage(ctx, "costs.njk", {
    title: "Costs",
    range,
    range_days: daily.length,
    quick,
    error: range.error,
    daily,
    chart: barChart(daily.map((d) => ({ label: d.day, value: d.cost_usd, detail: `${d.runs} runs` }))),
    by_agent: withRunCounts(rollUp(groups, (g) => g.agent_name), counts, "agent"),
    by_model: withRunCounts(rollUp(groups, (g) => g.model), counts, "model"),
    by_agent_model: withRunCounts(rollUp(groups, (g) => agentModelKey(g.agent_name, g.model)), counts, "agent_model").map((r) => {
      const [agent_name, model] = r.key.split("\u0000");
      return { ...r, agent_name, model };
    }).slice(0, 500),
    totals,
    avg_per_run: totals.runs ? totals.cost_usd / totals.runs : 0,
    budgets: budgetRows,
    evaluation: {
      agent: JUDGE_AGENT,
      totals: withRunCounts([{ ...totalOf(evaluation), key: "" }], counts, "evaluation")[0]!,
      by_model: withRunCounts(rollUp(evaluation, (g) => g.model), counts, "evaluation_model"),
    },
    month: new Date().toISOString().slice(0, 7),
    csv_url: `/costs.csv?from=${range.from}&to=${range.to}`,
  });
}

/** GET /costs.csv: one row per (day, agent, model). */
async function costsCsv(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  const range = rangeOf(ctx);
  const groups = await costGroups(deps.ports.clickhouse, project.id, range);
  const header = ["day", "agent_name", "model", "runs", "prompt_tokens", "completion_tokens", "total_tokens", "cost_usd", "computed_cost_usd", "computed_runs", "client_cost_runs"];
  const lines = [header.join(",")];
  for (const g of groups) {
    lines.push([g.day, g.agent_name, g.model, g.runs, g.prompt_tokens, g.completion_tokens, g.total_tokens, g.cost_usd.toFixed(6), g.computed_cost_usd.toFixed(6), g.computed_runs, g.client_runs].map(csvCell).join(","));
  }
  ctx.set("Cache-Control", "no-store");
  ctx.set("Content-Disposition", `attachment; filename="runwatch-costs-${range.from}-to-${range.to}.csv"`);
  ctx.type = "text/csv; charset=utf-8";
  ctx.body = `${lines.join("\r\n")}\r\n`;
}

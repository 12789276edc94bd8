/**
 * agent_budget_exceeded: an agent's spend in the current UTC day or month is over its budget (Postgres
 * agents.budget_usd; agents without a budget are never judged). Spend is summed in ClickHouse over the runs
 * that ended in the period, so it is right across pipeline processes. Checked only when a batch ends a costed
 * run of a user with such a rule: one budgets query (cached 10 s) and one spend query per user and period, at
 * most every 2 s per process; the periodic sweep checks every budgeted agent too, so a skipped check is caught.
 * Fires once per agent and period.
 */
import { Schema } from "effect";
import type { AlertContext, AlertFiring, AlertRule } from "../model.js";
import { agentBudgets, agentSpendSince, budgetedAgents } from "../../stores/alerts/trigger-reads.js";
import { isLlmCallEnd } from "../../core/events/spans.js";
import { AGENT_FIELD, COOLDOWN_FIELD, agentNameField, cooldownField, usd, defineTrigger } from "./define.js";

const BUDGET_TTL_MS = 10_000;
const budgets = new Map<string, { at: number; budget: number | null }>();

/** Start of the current UTC day or month. */
export function periodStart(period: "day" | "month", now: Date): Date {
  return period === "day"
    ? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()))
    : new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

async function budgetsOf(ctx: AlertContext, pairs: { project_id: number; agent: string }[]): Promise<Map<string, number | null>> {
  const now = Date.now();
  const out = new Map<string, number | null>();
  const missing = pairs.filter((p) => {
    const hit = budgets.get(`${p.project_id}:${p.agent}`);
    if (hit && now - hit.at < BUDGET_TTL_MS) {
      out.set(`${p.project_id}:${p.agent}`, hit.budget);
      return false;
    }
    return true;
  });
  if (missing.length > 0) {
    const rows = await agentBudgets(ctx.sql, missing);
    for (const p of missing) out.set(`${p.project_id}:${p.agent}`, null);
    for (const r of rows) out.set(`${r.project_id}:${r.name}`, r.budget_usd);
    for (const p of missing) budgets.set(`${p.project_id}:${p.agent}`, { at: now, budget: out.get(`${p.project_id}:${p.agent}`)! });
  }
  return out;
}

const SPEND_INTERVAL_MS = 2_000;
const lastSpendQuery = new Map<string, number>();

/** Compares each (rule, agent)'s spend in the rule's period with the agent's budget. */
async function judge(ctx: AlertContext, pairs: { rule: AlertRule; agent: string }[], now: Date): Promise<AlertFiring[]> {
  if (pairs.length === 0) return [];
  const budgetOf = await budgetsOf(ctx, pairs.map((w) => ({ project_id: w.rule.project_id, agent: w.agent })));
  const judged = pairs.filter((w) => (budgetOf.get(`${w.rule.project_id}:${w.agent}`) ?? null) !== null);
  if (judged.length === 0) return [];
  // One spend query per (user, period).
  const groups = new Map<string, { project_id: number; period: "day" | "month"; agents: Set<string> }>();
  for (const w of judged) {
    const period = w.rule.config.period as "day" | "month";
    const k = `${w.rule.project_id}:${period}`;
    const g = groups.get(k) ?? { project_id: w.rule.project_id, period, agents: new Set<string>() };
    g.agents.add(w.agent);
    groups.set(k, g);
  }
  const spend = new Map<string, number>();
  for (const [k, g] of groups) {
    lastSpendQuery.set(k, now.getTime());
    const rows = await agentSpendSince(ctx.clickhouse, { projectId: g.project_id, agents: [...g.agents], since: periodStart(g.period, now) });
    for (const r of rows) spend.set(`${k}:${r.agent_name}`, r.spend);
  }
  const out: AlertFiring[] = [];
  for (const w of judged) {
    const period = w.rule.config.period as "day" | "month";
    const budget = budgetOf.get(`${w.rule.project_id}:${w.agent}`)!;
    const spent = spend.get(`${w.rule.project_id}:${period}:${w.agent}`) ?? 0;
    if (!(spent > budget)) continue;
    const start = periodStart(period, now).toISOString().slice(0, period === "day" ? 10 : 7);
    out.push({
      key: `budget:${w.agent}:${period}:${start}`,
      rule: w.rule,
      message: `Agent ${w.agent} spent ${usd(spent)} ${period === "day" ? "today" : "this month"} (UTC), over its budget of ${usd(budget)}`,
      details: { agent_name: w.agent, spend_usd: Number(spent.toFixed(6)), budget_usd: budget, period, period_start: start },
    });
  }
  return out;
}

export const agentBudgetExceeded = defineTrigger({
  type: "agent_budget_exceeded",
  label: "Agent over budget",
  description: "An agent's spend in the current day or month (UTC) goes over its budget (set on the agent).",
  schema: Schema.Struct({
    period: Schema.optionalWith(Schema.Literal("day", "month").annotations({ message: () => ({ message: 'must be "day" or "month"', override: true }) }), { default: () => "day" as const }),
    agent_name: agentNameField,
    cooldown_seconds: cooldownField,
  }),
  fields: [
    { name: "period", label: "Budget period", kind: "select", options: [{ value: "day", label: "per day (UTC)" }, { value: "month", label: "per month (UTC)" }] },
    { ...AGENT_FIELD, help: "Only this agent. Empty: every agent that has a budget." },
    COOLDOWN_FIELD,
  ],
  defaultCooldownSeconds: 0,
  async evaluateBatch(checks, ctx) {
    // (rule, agent) pairs whose agent just ended a costed run, at most one spend query per user and
    // period every SPEND_INTERVAL_MS per process; the sweep catches a crossing skipped here.
    const now = new Date();
    const wanted = new Map<string, { rule: AlertRule; agent: string }>();
    for (const c of checks) {
      const agent = c.run.agent_name;
      // A run's cost grows with each LLM call (the totals rule), so a call that lands is checked as a run_end is.
      if (!agent || !(c.run.cost_usd > 0) || !c.events.some((e) => e.event_type === "run_end" || isLlmCallEnd(e))) continue;
      const only = c.rule.config.agent_name;
      if (typeof only === "string" && only && only !== agent) continue;
      if (now.getTime() - (lastSpendQuery.get(`${c.rule.project_id}:${c.rule.config.period}`) ?? 0) < SPEND_INTERVAL_MS) continue;
      wanted.set(`${c.rule.id}:${agent}`, { rule: c.rule, agent });
    }
    return judge(ctx, [...wanted.values()], now);
  },
  async sweep(rules, ctx, now) {
    // Every agent with a budget of the rules' projects (or the rule's one agent).
    const projects = [...new Set(rules.map((r) => r.project_id))];
    const rows = await budgetedAgents(ctx.sql, projects);
    const pairs: { rule: AlertRule; agent: string }[] = [];
    for (const rule of rules) {
      const only = typeof rule.config.agent_name === "string" ? rule.config.agent_name : "";
      for (const a of rows) if (a.project_id === rule.project_id && (!only || only === a.name)) pairs.push({ rule, agent: a.name });
    }
    return judge(ctx, pairs, now);
  },
});

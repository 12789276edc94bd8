/**
 * GET /agents: the agent registry (Postgres `agents`, with the active config version from `agent_configs`)
 * joined with each agent's run statistics from ClickHouse. Agents that have runs but no registry row yet
 * (the pipeline registers them on their first run) are listed too.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { SessionUser, WebDeps } from "../deps.js";
import { requireUser } from "../auth/session.js";
import { renderPage } from "./render.js";
import { agentRunStats, type AgentRunStats } from "./run-stats.js";

export const MAX_AGENTS = 500;

export interface AgentRow {
  name: string;
  framework: string;
  total_runs: number;
  budget_usd: number | null;
  tags: string[];
  active_version: number | null;
  versions: number;
  created_at: string | null;
  stats: AgentRunStats | undefined;
}

export async function listAgents(deps: WebDeps, userId: number): Promise<AgentRow[]> {
  const [registry, stats] = await Promise.all([
    deps.ports.sql.query<Record<string, unknown>>(
      `SELECT a.name, a.framework, a.total_runs, a.budget_usd, a.tags, a.created_at,
              (SELECT max(c.version) FROM agent_configs c WHERE c.agent_id = a.id AND c.is_active) AS active_version,
              (SELECT count(*) FROM agent_configs c WHERE c.agent_id = a.id) AS versions
         FROM agents a
        WHERE a.user_id = $1
        ORDER BY a.name
        LIMIT $2`,
      [userId, MAX_AGENTS],
    ),
    agentRunStats(deps.ports.clickhouse, userId, MAX_AGENTS),
  ]);
  const byName = new Map(stats.map((s) => [s.agent_name, s]));
  const rows: AgentRow[] = registry.map((r) => ({
    name: String(r.name),
    framework: String(r.framework ?? ""),
    total_runs: Number(r.total_runs ?? 0),
    budget_usd: r.budget_usd === null || r.budget_usd === undefined ? null : Number(r.budget_usd),
    tags: toTags(r.tags),
    active_version: r.active_version === null || r.active_version === undefined ? null : Number(r.active_version),
    versions: Number(r.versions ?? 0),
    created_at: r.created_at ? new Date(r.created_at as string).toISOString() : null,
    stats: byName.get(String(r.name)),
  }));
  const known = new Set(rows.map((r) => r.name));
  for (const s of stats) {
    if (!s.agent_name || known.has(s.agent_name)) continue;
    rows.push({ name: s.agent_name, framework: "", total_runs: s.runs, budget_usd: null, tags: [], active_version: null, versions: 0, created_at: null, stats: s });
  }
  return rows.sort((a, b) => (b.stats?.last_run_at ?? "").localeCompare(a.stats?.last_run_at ?? "") || a.name.localeCompare(b.name));
}

function toTags(v: unknown): string[] {
  if (Array.isArray(v)) return v.map(String);
  if (typeof v === "string" && v) {
    try { const p = JSON.parse(v); if (Array.isArray(p)) return p.map(String); } catch { /* plain text */ }
    return v.split(",").map((s) => s.trim()).filter(Boolean);
  }
  return [];
}

export function register(router: Router, deps: WebDeps): void {
  router.get("/agents", requireUser, async (ctx: Context) => {
    const user = ctx.state.user as SessionUser;
    const agents = await listAgents(deps, user.id);
    renderPage(ctx, "agents.njk", { title: "Agents", agents, limit: MAX_AGENTS });
  });
}

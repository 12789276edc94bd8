/**
 * The agent registry pages.
 *   GET  /agents                              the registry (Postgres `agents` + active config version) joined with
 *                                             each agent's run statistics from ClickHouse, and a "new agent" form.
 *                                             Agents that have runs but no registry row yet are listed too.
 *   POST /agents                              create an agent by hand (name, framework, tags, budget_usd, description)
 *   GET  /agents/:name?from=N&to=M            one agent: details, config versions, diff of two versions
 *   POST /agents/:name                        edit framework, tags, budget, description
 *   POST /agents/:name/configs                add a config version (JSON object, changelog, optionally activate)
 *   POST /agents/:name/configs/:v/activate    make version v the active one (also the roll back)
 * Store: stores/agent-registry.ts.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { SessionUser, WebDeps } from "../deps.js";
import { projectOfRequest } from "../auth/project.js";
import { queryParam, renderPage } from "../common/render.js";
import { formAction, readForm } from "../forms.js";
import { configVersionParam } from "../path-params.js";
import {
  addVersion, createAgent, diffConfigs, getAgent, listAgentSummaries, listVersions, updateAgent,
  type AgentFields, type AgentSummary, type ConfigVersion,
} from "../../stores/agent-registry.js";
import { agentMonthSpend } from "../../stores/runs/costs.js";
import { agentRunStats, type AgentRunStats } from "../../stores/runs/run-stats.js";
import { averageScores, type ScoreAverage } from "../../stores/scores.js";
import { activateThroughGate, type GateOutcome } from "../../stores/activation-gate.js";
import { can } from "../../core/access/roles.js";
import { JUDGE_AGENT } from "../../core/events/judge-runs.js";
import { gateView, registerAgentGatePage } from "./agent-gate-page.js";
import { agentBaselines } from "./agent-baselines.js";
import { mountPages } from "../route-table.js";
import { agentChart } from "../common/runs-url.js";

export const MAX_AGENTS = 500;

export interface AgentRow extends AgentSummary {
  stats: AgentRunStats | undefined;
  /** Average numeric and boolean scores of the agent's runs: the three most given. */
  scores: ScoreAverage[];
}

/** Averages grouped by agent (list page) or by config version (detail page). */
function groupBy<K>(averages: readonly ScoreAverage[], key: (a: ScoreAverage) => K): Map<K, ScoreAverage[]> {
  const out = new Map<K, ScoreAverage[]>();
  for (const a of averages) {
    const list = out.get(key(a));
    if (list) list.push(a);
    else out.set(key(a), [a]);
  }
  return out;
}

export async function listAgents(deps: WebDeps, userId: number): Promise<AgentRow[]> {
  const [registry, stats, averages] = await Promise.all([
    listAgentSummaries(deps.ports.sql, userId, MAX_AGENTS),
    agentRunStats(deps.ports.clickhouse, userId, MAX_AGENTS),
    averageScores(deps.ports.clickhouse, userId),
  ]);
  const byName = new Map(stats.map((s) => [s.agent_name, s]));
  const byAgent = groupBy(averages, (a) => a.agent_name);
  const scoresOf = (name: string) => (byAgent.get(name) ?? []).slice(0, 3);
  // The judge's own runs register their agent like any run's: it is evaluation, not one of the project's agents.
  const rows: AgentRow[] = registry.filter((r) => r.name !== JUDGE_AGENT).map((r) => ({ ...r, stats: byName.get(r.name), scores: scoresOf(r.name) }));
  const known = new Set(rows.map((r) => r.name));
  for (const s of stats) {
    if (!s.agent_name || known.has(s.agent_name)) continue;
    rows.push({ name: s.agent_name, framework: "", total_runs: s.runs, budget_usd: null, tags: [], active_version: null, versions: 0, created_at: null, stats: s, scores: scoresOf(s.agent_name) });
  }
  return rows.sort((a, b) => (b.stats?.last_run_at ?? "").localeCompare(a.stats?.last_run_at ?? "") || a.name.localeCompare(b.name));
}

/** What the agent forms show next to their field: a refused value (422), a duplicate name (409). */
const REFUSES = ["ValidationError", "Conflict"] as const;

const agentPath = (name: string) => `/agents/${encodeURIComponent(name)}`;

export function registerAgentsPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: { "GET /agents": listPage, "GET /agents/:name": detailPage },
    edit_agents: {
      "POST /agents": newAgent,
      "POST /agents/:name": editAgent,
      "POST /agents/:name/configs": addConfigVersion,
      "POST /agents/:name/configs/:version/activate": activateVersion,
    },
  });
  registerAgentGatePage(router, deps, (ctx, extra, status) => detailPage(ctx, deps, extra, status));
}

/** GET /agents, and the new-agent form's page when it is refused. */
async function listPage(ctx: Context, deps: WebDeps, extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const project = projectOfRequest(ctx);
  const agents = await listAgents(deps, project.id);
  renderPage(ctx, "agents.njk", { title: "Agents", agents, limit: MAX_AGENTS, values: {}, errors: {}, ...extra }, status);
}

/** POST /agents: an agent made by hand, then its page. */
async function newAgent(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  const form = await readForm(ctx);
  await formAction({
    refuses: REFUSES,
    run: async () => {
      const agent = await createAgent(deps.ports.sql, project.id, form as AgentFields);
      ctx.status = 303;
      ctx.redirect(`${agentPath(agent.name)}?created=1`);
    },
    refused: (r) => listPage(ctx, deps, { values: form, errors: { [r.field]: r.message }, open_form: true }, r.status),
  });
}

/**
 * The versions an agent's page shows: the two it compares (?from=&to=; by default the one before the latest, and the
 * latest) and the one its new-version form starts from (?edit=; by default the active one, else the latest).
 */
function chosenVersions(ctx: Context, versions: readonly ConfigVersion[]) {
  const byVersion = new Map(versions.map((v) => [v.version, v]));
  const active = versions.find((v) => v.is_active) ?? null;
  const latest = versions[0] ?? null;
  const to = byVersion.get(Number(queryParam(ctx, "to"))) ?? latest;
  const from = byVersion.get(Number(queryParam(ctx, "from"))) ?? (to ? versions.find((v) => v.version < to.version) : undefined) ?? null;
  const diff = from && to && from.version !== to.version ? diffConfigs(from.config, to.config) : null;
  const prefill = byVersion.get(Number(queryParam(ctx, "edit"))) ?? active ?? latest;
  return { active, from, to, diff, prefill };
}

/** GET /agents/:name, and the page of each of its forms when it is refused (`extra`: what the form shows back). */
async function detailPage(ctx: Context, deps: WebDeps, extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const project = projectOfRequest(ctx);
  const agent = await getAgent(deps.ports.sql, project.id, String(ctx.params.name));
  const [versions, spend, averages, gate, baselines] = await Promise.all([
    listVersions(deps.ports.sql, agent.id),
    agentMonthSpend(deps.ports.clickhouse, project.id, [agent.name]),
    averageScores(deps.ports.clickhouse, project.id, { agentName: agent.name, byVersion: true }),
    gateView(deps, project.id, agent),
    agentBaselines(deps, project.id, agent.name),
  ]);
  const { active, from, to, diff, prefill } = chosenVersions(ctx, versions);
  const month = spend.get(agent.name) ?? 0;
  renderPage(ctx, "agents-detail.njk", {
    title: `Agent ${agent.name}`,
    agent,
    versions,
    // Average scores per config version (key "none": runs sent without one).
    version_scores: Object.fromEntries(groupBy(averages, (a) => (a.config_version === null ? "none" : `v${a.config_version}`))),
    active,
    diff,
    diff_from: from,
    diff_to: to,
    month_spend: month,
    budget_pct: agent.budget_usd ? (month / agent.budget_usd) * 100 : null,
    values: { config: prefill ? JSON.stringify(prefill.config, null, 2) : "{\n  \n}", changelog: "" },
    agent_values: { ...agent, tags: agent.tags.join(", "), budget_usd: agent.budget_usd ?? "" },
    errors: {},
    flash: queryParam(ctx, "created") ? "Agent created. Add its first config version below." : queryParam(ctx, "flash"),
    api_url: `${deps.ports.config.publicWebUrl}/api/agents/${encodeURIComponent(agent.name)}/config`,
    ...gate,
    can_force: can(project.role, "force_activation"),
    gate_values: {},
    gate_errors: {},
    ...agentChart(agent.name, queryParam(ctx, "range"), `/agents/${encodeURIComponent(agent.name)}`),
    baselines,
    ...extra,
  }, status);
}

/** POST /agents/:name: its framework, tags, budget and description. */
async function editAgent(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  const form = await readForm(ctx);
  await formAction({
    refuses: REFUSES,
    run: async () => {
      await updateAgent(deps.ports.sql, project.id, String(ctx.params.name), form as AgentFields);
      ctx.status = 303;
      ctx.redirect(`${agentPath(String(ctx.params.name))}?flash=${encodeURIComponent("Saved.")}`);
    },
    refused: (r) => detailPage(ctx, deps, { agent_values: form, agent_errors: { [r.field]: r.message } }, r.status),
  });
}

/** The agent's page with the gate's refusal of an activation (409). */
const gateRefused = (ctx: Context, deps: WebDeps, outcome: Extract<GateOutcome, { activated: false }>) =>
  detailPage(ctx, deps, { gate_refusal: { message: outcome.refusal.message, check: outcome.check } }, 409);

/** POST /agents/:name/configs: a new config version, activated through the gate when asked. */
async function addConfigVersion(ctx: Context, deps: WebDeps): Promise<void> {
  const { sql, clickhouse } = deps.ports;
  const user = ctx.state.user as SessionUser;
  const project = projectOfRequest(ctx);
  const form = await readForm(ctx);
  const name = String(ctx.params.name);
  await formAction({
    refuses: REFUSES,
    run: async () => {
      const activate = form.activate === "on" || form.activate === "1";
      const version = await addVersion(sql, project.id, name, { config: form.config, changelog: form.changelog, createdBy: user.id });
      deps.logger.info("agent config version added", { user_id: user.id, agent: name, version });
      // Activated through the gate: a version whose experiment breaks a rule is saved, not activated.
      const outcome = activate ? await activateThroughGate(sql, clickhouse, project.id, name, version, user.id) : undefined;
      if (outcome && !outcome.activated) return gateRefused(ctx, deps, outcome);
      ctx.status = 303;
      ctx.redirect(`${agentPath(name)}?flash=${encodeURIComponent(`Version ${version} saved${form.activate ? " and active" : ""}.`)}`);
    },
    refused: (r) => detailPage(ctx, deps, { values: { config: form.config ?? "", changelog: form.changelog ?? "", activate: form.activate }, errors: { [r.field]: r.message } }, r.status),
  });
}

/** POST /agents/:name/configs/:version/activate: version v becomes the active one (also the roll back), through the gate. */
async function activateVersion(ctx: Context, deps: WebDeps): Promise<void> {
  const user = ctx.state.user as SessionUser;
  const project = projectOfRequest(ctx);
  const name = String(ctx.params.name);
  const version = configVersionParam(ctx);
  const outcome = await activateThroughGate(deps.ports.sql, deps.ports.clickhouse, project.id, name, version, user.id);
  if (!outcome.activated) return gateRefused(ctx, deps, outcome);
  deps.logger.info("agent config version activated", { user_id: user.id, agent: name, version });
  ctx.status = 303;
  ctx.redirect(`${agentPath(name)}?flash=${encodeURIComponent(`Version ${version} is now active.`)}`);
}

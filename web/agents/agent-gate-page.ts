/**
 * The activation gate on an agent's page (docs/EVALUATION.md):
 *
 *   POST /agents/:name/gate                      add or change a rule: score_name, max_drop
 *   POST /agents/:name/gate/remove               remove the rule of score_name
 *   GET  /agents/:name/configs/:version/gate     what activating the version would do: its latest experiment next to
 *                                                the active version's, the rules, what breaks them; activate, or force
 *   POST /agents/:name/configs/:version/force    activate past the gate, with a reason (force_activation: admins)
 *
 * and what the page shows of it: the rules, and each config version's latest experiment (its score means), so that
 * activating a version shows its experiment next to the active version's. The activation itself goes through the
 * gate in agents.ts.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { can } from "../../core/access/roles.js";
import { activateThroughGate, checkGate, gateRules, parseGateRule, removeGateRule, setGateRule } from "../../stores/activation-gate.js";
import type { Agent } from "../../stores/agent-registry.js";
import { summarizeExperiment, type ExperimentSummary } from "../../stores/datasets/experiment-results.js";
import { experimentsOfAgent } from "../../stores/datasets/experiments.js";
import { projectOfRequest } from "../auth/project.js";
import type { SessionUser, WebDeps } from "../deps.js";
import { formAction, readForm } from "../forms.js";
import { configVersionParam } from "../path-params.js";
import { renderPage } from "../common/render.js";
import { mountPages } from "../route-table.js";

/** Versions whose latest experiment the page summarises (newest first). */
const VERSIONS_WITH_EXPERIMENTS = 10;

/** The gate's part of an agent's page: its rules and each recent config version's latest experiment. */
export async function gateView(deps: WebDeps, projectId: number, agent: Agent) {
  const { sql, clickhouse } = deps.ports;
  const [rules, experiments] = await Promise.all([gateRules(sql, agent.id), experimentsOfAgent(sql, projectId, agent.name)]);
  const latest = new Map<number, (typeof experiments)[number]>();
  for (const e of experiments) if (e.config_version !== null && !latest.has(e.config_version)) latest.set(e.config_version, e);
  const chosen = [...latest.entries()].sort(([a], [b]) => b - a).slice(0, VERSIONS_WITH_EXPERIMENTS);
  const summaries: Record<string, ExperimentSummary> = {};
  for (const [version, e] of chosen) summaries[`v${version}`] = await summarizeExperiment(clickhouse, projectId, e);
  return { gate_rules: rules, version_experiments: summaries };
}

/** The agent's page with what a refused gate form shows back (`extra`), at `status` (web/agents/agents-page.ts). */
export type ShowAgent = (ctx: Context, extra: Record<string, unknown>, status: number) => Promise<void>;

export function registerAgentGatePage(router: Router, deps: WebDeps, showAgent: ShowAgent): void {
  mountPages(router, deps, {
    edit_agents: {
      "POST /agents/:name/gate": (ctx: Context) => setRule(ctx, deps, showAgent),
      "POST /agents/:name/gate/remove": removeRule,
    },
    read: { "GET /agents/:name/configs/:version/gate": gatePage },
    force_activation: { "POST /agents/:name/configs/:version/force": forceActivation },
  });
}

/** Back to the agent's gate, with what changed. */
function back(ctx: Context, name: string, flash: string): void {
  ctx.status = 303;
  ctx.redirect(`/agents/${encodeURIComponent(name)}?flash=${encodeURIComponent(flash)}#gate`);
}

/** POST /agents/:name/gate: a rule added or changed; refused, the agent's page shows the form back. */
async function setRule(ctx: Context, deps: WebDeps, showAgent: ShowAgent): Promise<void> {
  const form = await readForm(ctx);
  const name = String(ctx.params.name);
  await formAction({
    refuses: ["ValidationError", "Conflict"],
    field: "score_name",
    run: async () => {
      const rule = parseGateRule(form);
      await setGateRule(deps.ports.sql, projectOfRequest(ctx).id, name, rule, (ctx.state.user as SessionUser).id);
      back(ctx, name, `Activations now refuse a drop of "${rule.score_name}" by more than ${rule.max_drop}.`);
    },
    refused: (r) => showAgent(ctx, { gate_values: form, gate_errors: { [r.field]: r.message } }, r.status),
  });
}

/** GET /agents/:name/configs/:version/gate, and the force form's page when it is refused. */
async function gatePage(ctx: Context, deps: WebDeps, extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const project = projectOfRequest(ctx);
  const check = await checkGate(deps.ports.sql, deps.ports.clickhouse, project.id, String(ctx.params.name), configVersionParam(ctx));
  renderPage(ctx, "agent-gate.njk", {
    title: `Activate ${check.agent} v${check.version}?`, check, can_force: can(project.role, "force_activation"),
    can_activate: can(project.role, "edit_agents"), errors: {}, values: {}, ...extra,
  }, status);
}

/** POST /agents/:name/configs/:version/force: activated past the gate, with a reason. */
async function forceActivation(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  const name = String(ctx.params.name);
  const version = configVersionParam(ctx);
  await formAction({
    refuses: ["ValidationError"],
    field: "reason",
    run: async () => {
      const outcome = await activateThroughGate(deps.ports.sql, deps.ports.clickhouse, projectOfRequest(ctx).id, name, version, (ctx.state.user as SessionUser).id, { reason: form.reason ?? "", allowed: true });
      const forced = outcome.activated && outcome.forced;
      back(ctx, name, `Version ${version} is now active${forced ? " (forced past the gate; the reason is in the audit log)" : ""}.`);
    },
    refused: (r) => gatePage(ctx, deps, { values: form, errors: { [r.field]: r.message } }, r.status),
  });
}

/** POST /agents/:name/gate/remove: the rule of score_name removed. */
async function removeRule(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  const name = String(ctx.params.name);
  await removeGateRule(deps.ports.sql, projectOfRequest(ctx).id, name, form.score_name ?? "");
  back(ctx, name, "Gate rule removed.");
}

/**
 * POST /api/agents/{name}/configs/{version}/activate {force?, reason?} (Bearer key with scope read+ingest; the
 * activation gate, docs/EVALUATION.md): activates the version unless its latest experiment breaks one of the
 * agent's gate rules against the active version's on the same dataset. 200 {agent, version, forced, gate}; 409
 * gate_refused naming each score and both values (also as `error.violations`). `gate` names the experiments compared
 * (`basis`, and each one's summary with the scores the gate counts). `force` with a reason overrides the refusal when
 * the key's owner is an admin or the owner of the project. Every activation is in the audit log.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { can } from "../../core/access/roles.js";
import { ValidationError } from "../../core/errors.js";
import { activateThroughGate, type GateCheck } from "../../stores/activation-gate.js";
import type { WebDeps } from "../deps.js";
import { readJsonBody } from "../json-body.js";
import { configVersionParam } from "../path-params.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { keyPrincipalOf, readAuthorizer } from "../api/read-api.js";
import { mountApi } from "../route-table.js";

/** The gate's check as the API shows it: what it compared, both experiments' summaries, the rules and what broke them. */
const gateJson = (c: GateCheck) => ({
  basis: c.basis,
  active_version: c.active_version,
  active_experiment: c.active,
  candidate_experiment: c.candidate,
  rules: c.rules,
  violations: c.violations,
});

export function registerAgentActivationApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  const authorize = readAuthorizer(deps, auth);
  mountApi(router, deps, authorize, {
    edit_agents: { "POST /api/agents/:name/configs/:version/activate": activateVersion },
  });
}

async function activateVersion(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const version = configVersionParam(ctx);
  const body = (await readJsonBody(ctx, 16 * 1024)) as { force?: unknown; reason?: unknown } | null;
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new ValidationError({ message: 'the body must be a JSON object like {"force": true, "reason": "…"}' });
  if (body.force !== undefined && typeof body.force !== "boolean") throw new ValidationError({ field: "force", message: "force must be true or false" });
  if (body.reason !== undefined && typeof body.reason !== "string") throw new ValidationError({ field: "reason", message: "reason must be a string" });
  // The key's principal carries its creator's role as it is now (web/middleware/api-key-auth.ts).
  const force = body.force ? { reason: (body.reason as string | undefined) ?? "", allowed: can(p.role, "force_activation") } : undefined;
  const name = String(ctx.params.name);
  const outcome = await activateThroughGate(deps.ports.sql, deps.ports.clickhouse, p.projectId, name, version, p.userId, force);
  if (!outcome.activated) {
    ctx.status = 409;
    ctx.body = { error: { code: "gate_refused", message: outcome.refusal.message, field: "force", violations: outcome.check.violations }, gate: gateJson(outcome.check) };
    return;
  }
  ctx.body = { agent: outcome.check.agent, version, forced: outcome.forced, gate: gateJson(outcome.check) };
}

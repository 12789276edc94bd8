/**
 * The gate on a prompt's `production` label, over the API (Bearer key with scope read+ingest; docs/PROMPTS.md, The
 * gate):
 *
 *   GET    /api/prompts/{name}/gate?version=N         → {rules, gate}: what moving production to N would compare
 *   PUT    /api/prompts/{name}/gate/rules/{score}  {max_drop}  → {rule}
 *   DELETE /api/prompts/{name}/gate/rules/{score}    → 204
 *
 * The move itself is PUT /api/prompts/{name}/labels/production (prompts-api.ts), answered 409 gate_refused here.
 * Rules are written by those who may edit prompts; forcing a refused move takes `force_activation` (an admin).
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { ValidationError } from "../../core/errors.js";
import { checkPromptGate, type LabelOutcome, type PromptGateCheck } from "../../prompts/index.js";
import { parseGateRule } from "../../stores/experiment-gate.js";
import { promptGateRules, removePromptGateRule, setPromptGateRule } from "../../stores/prompt-gate-rules.js";
import { checkPromptName } from "../../stores/prompt-input.js";
import { MAX_VERSIONS } from "../../stores/prompts.js";
import { intParam, keyPrincipalOf, readAuthorizer } from "../api/read-api.js";
import type { WebDeps } from "../deps.js";
import { readJsonBody } from "../json-body.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { mountApi } from "../route-table.js";

/** The gate's check as the API shows it: what it compared, both experiments' summaries, the rules and what broke them. */
export const promptGateJson = (c: PromptGateCheck) => ({
  basis: c.basis,
  production_version: c.production_version,
  active_experiment: c.active,
  candidate_experiment: c.candidate,
  rules: c.rules,
  violations: c.violations,
});

/** A label move's answer: 200 with what moved, or the 409 naming each rule broken and both experiments. */
export function answerLabelOutcome(ctx: Context, outcome: LabelOutcome): void {
  if (!outcome.moved) {
    ctx.status = 409;
    ctx.body = { error: { code: "gate_refused", message: outcome.refusal.message, field: "force", violations: outcome.check.violations }, gate: promptGateJson(outcome.check) };
    return;
  }
  ctx.body = { label: outcome.label, version: outcome.version, previous: outcome.previous, forced: outcome.forced, gate: outcome.check ? promptGateJson(outcome.check) : null };
}

export function registerPromptGateApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  mountApi(router, deps, readAuthorizer(deps, auth), {
    read: { "GET /api/prompts/:name/gate": getGate },
    edit_prompts: {
      "PUT /api/prompts/:name/gate/rules/:score": putRule,
      "DELETE /api/prompts/:name/gate/rules/:score": deleteRule,
    },
  });
}

async function getGate(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const version = intParam(ctx, "version", 1, MAX_VERSIONS);
  const name = checkPromptName(ctx.params.name);
  ctx.set("Cache-Control", "no-store");
  if (version === undefined) {
    ctx.body = { rules: await promptGateRules(deps.ports.sql, p.projectId, name), gate: null };
    return;
  }
  const check = await checkPromptGate(deps.ports.sql, deps.ports.clickhouse, p.projectId, name, version);
  ctx.body = { rules: check.rules, gate: promptGateJson(check) };
}

async function putRule(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const body = (await readJsonBody(ctx, 4096)) as { max_drop?: unknown } | null;
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new ValidationError({ message: 'the body must be a JSON object like {"max_drop": 0.05}' });
  const rule = parseGateRule({ score_name: ctx.params.score, max_drop: body.max_drop });
  await setPromptGateRule(deps.ports.sql, p.projectId, checkPromptName(ctx.params.name), rule, p.userId);
  ctx.body = { rule };
}

async function deleteRule(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  await removePromptGateRule(deps.ports.sql, p.projectId, checkPromptName(ctx.params.name), parseGateRule({ score_name: ctx.params.score, max_drop: 0 }).score_name, p.userId);
  ctx.status = 204;
}

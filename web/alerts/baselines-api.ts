/**
 * GET /api/baselines?agent=…&metric=…[&score=…][&window_minutes=30] (Bearer key, read; `score` names the score of
 * metric=score_mean): an agent's learned baseline opened up —
 * the band per sensitivity or "learning", the hourly values it was learned from, the live window, and the change
 * points (config activations, new releases) with the metric before and after each (alerts/baselines/explain.ts).
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { ValidationError } from "../../core/errors.js";
import { BASELINE_METRIC_NAMES, explainBaseline, type BaselineMetric } from "../../alerts/index.js";
import type { WebDeps } from "../deps.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { intParam, keyPrincipalOf, readAuthorizer, stringParam } from "../api/read-api.js";
import { mountApi } from "../route-table.js";

export function registerBaselinesApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  mountApi(router, deps, readAuthorizer(deps, auth), { read: { "GET /api/baselines": (ctx) => explain(ctx, deps) } });
}

async function explain(ctx: Context, deps: WebDeps): Promise<void> {
  const agent = stringParam(ctx, "agent");
  if (agent === undefined) throw new ValidationError({ field: "agent", message: "agent is required (the agent's name)" });
  if (agent.length > 200) throw new ValidationError({ field: "agent", message: "agent must be at most 200 characters" });
  const metric = stringParam(ctx, "metric");
  if (metric === undefined || !(BASELINE_METRIC_NAMES as readonly string[]).includes(metric)) {
    throw new ValidationError({ field: "metric", message: `metric must be one of ${BASELINE_METRIC_NAMES.join(", ")}` });
  }
  const score = stringParam(ctx, "score");
  if (metric === "score_mean" && !score) throw new ValidationError({ field: "score", message: "score is required for metric=score_mean (the score's name)" });
  if (score !== undefined && score.length > 200) throw new ValidationError({ field: "score", message: "score must be at most 200 characters" });
  const windowMinutes = intParam(ctx, "window_minutes", 1, 1440) ?? 30;
  const p = keyPrincipalOf(ctx);
  ctx.body = await explainBaseline(deps.ports, { projectId: p.projectId, agent, metric: metric as BaselineMetric, ...(metric === "score_mean" ? { score } : {}), windowMinutes, now: new Date() });
}

/**
 * GET /api/agents/{name}/config (Bearer key, read rate-limit bucket): the agent's active config version,
 * `{agent, version, config, changelog, activated_at, experiment}` (experiment: the version's latest experiment, or
 * null), with a strong ETag over that body. A client that
 * sends the ETag back in If-None-Match gets 304 until another version is activated (or the same one is
 * activated again), so SDKs can poll cheaply. 404 names what is missing: the agent, or an active version.
 */
import { createHash } from "node:crypto";
import type Router from "@koa/router";
import type { Context } from "koa";
import type { WebDeps } from "../deps.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { keyPrincipalOf, readAuthorizer } from "../api/read-api.js";
import { activeConfig } from "../../stores/agent-registry.js";
import { experimentsOfAgent } from "../../stores/datasets/experiments.js";
import { mountApi } from "../route-table.js";

export const etagOf = (body: string): string => `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;

/** True when If-None-Match lists the ETag (weak comparison, as RFC 9110 asks for If-None-Match) or is `*`. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === "*") return true;
  const strip = (t: string) => t.trim().replace(/^W\//, "");
  return header.split(",").some((t) => strip(t) === etag);
}

export function registerAgentConfigApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  const authorize = readAuthorizer(deps, auth);
  mountApi(router, deps, authorize, {
    read: { "GET /api/agents/:name/config": getActiveConfig },
  });
}

async function getActiveConfig(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const cfg = await activeConfig(deps.ports.sql, p.projectId, String(ctx.params.name));
  // The active version's latest experiment, as the activation gate compares it (docs/EVALUATION.md).
  const experiment = (await experimentsOfAgent(deps.ports.sql, p.projectId, cfg.agent)).find((e) => e.config_version === cfg.version);
  const body = JSON.stringify({
    ...cfg,
    experiment: experiment ? { id: experiment.id, name: experiment.name, dataset: experiment.dataset, dataset_version: experiment.dataset_version, status: experiment.status } : null,
  });
  const etag = etagOf(body);
  ctx.set("ETag", etag);
  ctx.set("Cache-Control", "private, no-cache");
  if (matchesIfNoneMatch(ctx.get("If-None-Match"), etag)) {
    ctx.status = 304;
    return;
  }
  ctx.type = "application/json";
  ctx.body = body;
}

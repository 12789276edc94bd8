/**
 * Prompts API (Bearer key with scope read+ingest; docs/PROMPTS.md):
 *
 *   GET  /api/prompts                                  → {prompts: [{name, latest_version, labels, …}]}
 *   POST /api/prompts/{name}/versions {prompt, config?, message?, labels?} → 201 {prompt}; 422 naming the field
 *   GET  /api/prompts/{name}?label=|?version=          → {prompt} (the newest without either); ETag, 304 on If-None-Match
 *   GET  /api/prompts/{name}/versions?limit&before     → {versions} newest first
 *   PUT  /api/prompts/{name}/labels/{label} {version, force?, reason?} → {label, version, previous, forced, gate};
 *        `production` goes through the gate (prompt-gate-api.ts): 409 gate_refused unless an admin forces it
 *   DELETE /api/prompts/{name}/labels/{label}          → 204
 *   GET  /api/prompts/{name}/diff?from=&to=            → {from, to, diff}
 *
 * Writing needs `edit_prompts` (core/access/roles.ts); a viewer's key reads. Another project's prompt is a 404.
 */
import { createHash } from "node:crypto";
import type Router from "@koa/router";
import type { Context } from "koa";
import { ValidationError } from "../../core/errors.js";
import { can } from "../../core/access/roles.js";
import { diffPromptVersions, labelThroughGate, promptVersions, pushPromptVersion, readPrompt } from "../../prompts/index.js";
import { checkLabel, checkPromptName, LATEST } from "../../stores/prompt-input.js";
import { deletePromptLabel, listPrompts, MAX_VERSIONS, type VersionRef } from "../../stores/prompts.js";
import { intParam, keyPrincipalOf, readAuthorizer, stringParam } from "../api/read-api.js";
import type { WebDeps } from "../deps.js";
import { readJsonBody } from "../json-body.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { mountApi } from "../route-table.js";
import { answerLabelOutcome } from "./prompt-gate-api.js";

/** 200 messages of up to 100,000 characters would not fit; this is what one version may carry. */
export const MAX_PROMPT_BODY = 2 * 1024 * 1024;
const DEFAULT_PAGE = 100;
const MAX_PAGE = 500;
/**
 * How long a client may use a label's answer without asking: short, since a label moves; the SDKs cache on their own
 * TTL and revalidate with If-None-Match, which costs a 304 and no body.
 */
const LABEL_MAX_AGE_S = 10;

export function registerPromptsApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  mountApi(router, deps, readAuthorizer(deps, auth), {
    read: {
      "GET /api/prompts": getPrompts,
      "GET /api/prompts/:name": getPrompt,
      "GET /api/prompts/:name/versions": getVersions,
      "GET /api/prompts/:name/diff": getDiff,
    },
    edit_prompts: {
      "POST /api/prompts/:name/versions": postVersion,
      "PUT /api/prompts/:name/labels/:label": putLabel,
      "DELETE /api/prompts/:name/labels/:label": deleteLabel,
    },
  });
}

/** `?label=` or `?version=` (not both); the newest version without either. */
export function versionRef(ctx: Context): VersionRef {
  const label = stringParam(ctx, "label");
  const version = intParam(ctx, "version", 1, MAX_VERSIONS);
  if (label !== undefined && version !== undefined) throw new ValidationError({ field: "version", message: "give label or version, not both" });
  if (version !== undefined) return { version };
  if (label === undefined || label === LATEST) return { latest: true };
  return { label: checkLabel(label) };
}

async function getPrompts(ctx: Context, deps: WebDeps): Promise<void> {
  ctx.set("Cache-Control", "no-store");
  ctx.body = { prompts: await listPrompts(deps.ports.sql, keyPrincipalOf(ctx).projectId) };
}

async function getPrompt(ctx: Context, deps: WebDeps): Promise<void> {
  const prompt = await readPrompt(deps.ports.sql, keyPrincipalOf(ctx).projectId, ctx.params.name!, versionRef(ctx));
  const body = JSON.stringify({ prompt });
  // The answer's hash: a client that holds it gets a 304 until the label moves or the version's labels change.
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
  ctx.set("ETag", etag);
  ctx.set("Cache-Control", `private, max-age=${LABEL_MAX_AGE_S}`);
  const held = ctx.get("If-None-Match");
  if (held && held.split(",").some((t) => t.trim().replace(/^W\//, "") === etag)) {
    ctx.status = 304;
    return;
  }
  ctx.type = "application/json";
  ctx.body = body;
}

async function getVersions(ctx: Context, deps: WebDeps): Promise<void> {
  const page = { limit: intParam(ctx, "limit", 1, MAX_PAGE) ?? DEFAULT_PAGE, before: intParam(ctx, "before", 1, MAX_VERSIONS + 1) };
  ctx.set("Cache-Control", "no-store");
  ctx.body = { versions: await promptVersions(deps.ports.sql, keyPrincipalOf(ctx).projectId, ctx.params.name!, page) };
}

async function getDiff(ctx: Context, deps: WebDeps): Promise<void> {
  const need = (name: string) => {
    const v = intParam(ctx, name, 1, MAX_VERSIONS);
    if (v === undefined) throw new ValidationError({ field: name, message: `${name} is required: a version number` });
    return v;
  };
  const [from, to] = [need("from"), need("to")];
  const { diff } = await diffPromptVersions(deps.ports.sql, keyPrincipalOf(ctx).projectId, ctx.params.name!, from, to);
  ctx.set("Cache-Control", "no-store");
  ctx.body = { from, to, diff };
}

async function postVersion(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const prompt = await pushPromptVersion(deps.ports.sql, p.projectId, p.userId, ctx.params.name, await readJsonBody(ctx, MAX_PROMPT_BODY));
  ctx.status = 201;
  ctx.body = { prompt };
}

async function putLabel(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const raw = (await readJsonBody(ctx, 16 * 1024)) as { version?: unknown; force?: unknown; reason?: unknown } | null;
  const body = raw && typeof raw === "object" && !Array.isArray(raw) ? raw : {};
  const version = body.version;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 1 || version > MAX_VERSIONS) {
    throw new ValidationError({ field: "version", message: `version is required: a version number from 1 to ${MAX_VERSIONS}, like {"version": 3}` });
  }
  if (body.force !== undefined && typeof body.force !== "boolean") throw new ValidationError({ field: "force", message: "force must be true or false" });
  if (body.reason !== undefined && typeof body.reason !== "string") throw new ValidationError({ field: "reason", message: "reason must be a string" });
  // The key's principal carries its creator's role as it is now (web/middleware/api-key-auth.ts).
  const force = body.force ? { reason: (body.reason as string | undefined) ?? "", allowed: can(p.role, "force_activation") } : undefined;
  answerLabelOutcome(ctx, await labelThroughGate(deps.ports.sql, deps.ports.clickhouse, p.projectId, p.userId, ctx.params.name!, ctx.params.label, version, force));
}

async function deleteLabel(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  await deletePromptLabel(deps.ports.sql, p.projectId, p.userId, checkPromptName(ctx.params.name), checkLabel(ctx.params.label));
  ctx.status = 204;
}

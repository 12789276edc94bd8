/**
 * The playground's API (docs/PROMPTS.md, Playground; Bearer key with scope read+ingest, `edit_prompts` — members and
 * above, as the page):
 *
 *   POST /api/prompts/{name}/playground {version? | label? | prompt, config?, variables?} → 200 {run}
 *
 * Runs one version (by number or label; the newest without either) or a draft (`prompt` and `config` as a version's
 * body holds them) once against its provider, with the project's provider keys and within its judge caps
 * (playground-run.ts). 422 naming the field for a missing variable, an unknown version, a config the provider
 * refuses or a provider that did not answer in time; 403/409/429 when the key rules or caps refuse the call.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { ValidationError } from "../../core/errors.js";
import { checkLabel } from "../../stores/prompt-input.js";
import { MAX_VERSIONS, type VersionRef } from "../../stores/prompts.js";
import { keyPrincipalOf, readAuthorizer } from "../api/read-api.js";
import type { WebDeps } from "../deps.js";
import { readJsonBody } from "../json-body.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { mountApi } from "../route-table.js";
import { MAX_PROMPT_BODY } from "./prompts-api.js";
import { runPlayground, type PlaygroundSubject } from "./playground-run.js";

export function registerPlaygroundApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  mountApi(router, deps, readAuthorizer(deps, auth), {
    edit_prompts: { "POST /api/prompts/:name/playground": postRun },
  });
}

const KNOWN = new Set(["version", "label", "prompt", "config", "variables"]);

/** What the body asks to run; a ValidationError names the field it refuses. */
export function subjectOfBody(body: Record<string, unknown>): PlaygroundSubject {
  const unknown = Object.keys(body).find((k) => !KNOWN.has(k));
  if (unknown) throw new ValidationError({ field: unknown, message: `${unknown} is not a known field (expected version, label, prompt, config, variables)` });
  const { version, label, prompt, config } = body;
  if (prompt !== undefined) {
    if (version !== undefined || label !== undefined) throw new ValidationError({ field: "prompt", message: "give a version (or label) to run, or a draft's prompt, not both" });
    return { draft: { prompt, ...(config !== undefined ? { config } : {}) } };
  }
  if (config !== undefined) throw new ValidationError({ field: "config", message: "config goes with a draft's prompt; a version runs with its own" });
  if (version !== undefined && label !== undefined) throw new ValidationError({ field: "version", message: "give version or label, not both" });
  if (version !== undefined) {
    if (typeof version !== "number" || !Number.isInteger(version) || version < 1 || version > MAX_VERSIONS) {
      throw new ValidationError({ field: "version", message: `version must be a version number from 1 to ${MAX_VERSIONS}` });
    }
    return { ref: { version } };
  }
  const ref: VersionRef = label !== undefined ? { label: checkLabel(label) } : { latest: true };
  return { ref };
}

export function variablesOfBody(body: Record<string, unknown>): Record<string, unknown> {
  const v = body.variables;
  if (v === undefined) return {};
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new ValidationError({ field: "variables", message: 'variables must be an object like {"question": "…"}' });
  return v as Record<string, unknown>;
}

async function postRun(ctx: Context, deps: WebDeps): Promise<void> {
  const raw = await readJsonBody(ctx, MAX_PROMPT_BODY);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new ValidationError({ message: 'the body must be a JSON object like {"version": 2, "variables": {"question": "…"}}' });
  }
  const body = raw as Record<string, unknown>;
  const p = keyPrincipalOf(ctx);
  const run = await runPlayground(deps, p.projectId, ctx.params.name!, subjectOfBody(body), variablesOfBody(body));
  ctx.set("Cache-Control", "no-store");
  ctx.body = { run };
}

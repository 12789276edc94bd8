/**
 * A project's own LLM provider keys for its judges (docs/EVALUATORS.md, Provider keys; Bearer key with read access):
 *
 *   GET    /api/provider-keys                 → {provider_keys: [{provider, key_hint, base_url, default_model, updated_at}]}
 *   PUT    /api/provider-keys/{provider} {api_key, base_url?, default_model?} → {provider_key}; the key's owner must be an
 *          admin of the project (403 otherwise); a base_url on a private address is a 422
 *   DELETE /api/provider-keys/{provider}      → 204 (404 when the project has none for it); admins too
 *
 * The key itself is never answered, only its last four characters.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { NotFound } from "../../core/errors.js";
import { deleteProviderKey, listProviderKeys, parseProvider, providerKeyWrites, setProviderKey } from "../../stores/evaluation/provider-keys.js";
import type { WebDeps } from "../deps.js";
import { readJsonBody } from "../json-body.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { keyPrincipalOf, readAuthorizer } from "../api/read-api.js";
import { mountApi } from "../route-table.js";

export function registerProviderKeysApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  const authorize = readAuthorizer(deps, auth);
  mountApi(router, deps, authorize, {
    read: { "GET /api/provider-keys": getProviderKeys },
    manage_settings: {
      "PUT /api/provider-keys/:provider": putProviderKey,
      "DELETE /api/provider-keys/:provider": removeProviderKey,
    },
  });
}

async function getProviderKeys(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  ctx.set("Cache-Control", "no-store");
  ctx.body = { provider_keys: await listProviderKeys(deps.ports.sql, p.projectId) };
}

async function putProviderKey(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const provider = parseProvider(ctx.params.provider);
  ctx.body = { provider_key: await setProviderKey(providerKeyWrites(deps.ports.sql, deps.sessionSecret), p.projectId, p.userId, provider, await readJsonBody(ctx, 8 * 1024)) };
}

async function removeProviderKey(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const provider = parseProvider(ctx.params.provider);
  if (!(await deleteProviderKey(deps.ports.sql, p.projectId, p.userId, provider))) throw new NotFound({ resource: "provider key", message: `this project has no ${provider} key` });
  ctx.status = 204;
}

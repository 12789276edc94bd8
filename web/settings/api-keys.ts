/**
 * /settings/api-keys: the keys of the user's personal project: list (name, last 4, scope, creator, created, expires,
 * last used), create (the key is shown exactly once, in the response to the create form, never stored in clear; its
 * scope: docs/TEAMS.md) and revoke.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { WebDeps } from "../deps.js";
import type { SessionUser } from "../deps.js";
import { formAction, readForm } from "../forms.js";
import { render } from "../views.js";
import { projectOfRequest } from "../auth/project.js";
import type { KeyScope } from "../../core/access/roles.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { accessChanged } from "../middleware/access-changed.js";
import { createApiKey, listApiKeys, parseExpiry, revokeApiKey } from "../../stores/accounts/api-keys.js";
import { mountPages } from "../route-table.js";

export const EXPIRY_CHOICES = [
  { value: "", label: "Never" },
  { value: "7d", label: "7 days" },
  { value: "30d", label: "30 days" },
  { value: "90d", label: "90 days" },
  { value: "1y", label: "1 year" },
];

export function registerApiKeySettings(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  mountPages(router, deps, {
    manage_keys: {
      "GET /settings/api-keys": keysPage,
      "POST /settings/api-keys": createKey,
      "POST /settings/api-keys/:id/revoke": (ctx: Context) => revokeKey(ctx, deps, auth),
    },
  });
}

/** GET /settings/api-keys, and the page each form shows (`extra`: a new key, a refusal) at `status`. */
async function keysPage(ctx: Context, deps: WebDeps, extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const project = projectOfRequest(ctx);
  const keys = await listApiKeys(deps.ports.sql, project.id);
  ctx.set("Cache-Control", "no-store");
  render(ctx, "settings/api-keys.njk", {
    title: "API keys",
    keys,
    expiryChoices: EXPIRY_CHOICES,
    ingestUrl: `${deps.ports.config.publicWebUrl}/api/ingest`,
    values: {},
    errors: {},
    ...extra,
  }, status);
}

/** POST /settings/api-keys: the new key, shown this once (201). */
async function createKey(ctx: Context, deps: WebDeps): Promise<void> {
  const user = ctx.state.user as SessionUser;
  const project = projectOfRequest(ctx);
  const form = await readForm(ctx);
  const values = { name: form.name ?? "", expires: form.expires ?? "", expires_on: form.expires_on ?? "", scope: form.scope || "read+ingest" };
  await formAction({
    refuses: ["ValidationError"],
    run: async () => {
      const expiresAt = parseExpiry(values.expires_on || values.expires);
      const created = await createApiKey(deps.ports.sql, user.id, values.name, expiresAt, { projectId: project.id, scope: values.scope as KeyScope });
      deps.logger.info("api key created", { user_id: user.id, key_id: created.info.id });
      await keysPage(ctx, deps, { created: { key: created.key, name: created.info.name, expires_at: created.info.expires_at } }, 201);
    },
    // The form has places for these three only; any other refusal shows by the name.
    refused: (r) => keysPage(ctx, deps, { values, errors: { [r.field === "expires" || r.field === "scope" ? r.field : "name"]: r.message } }, r.status),
  });
}

/** POST /settings/api-keys/:id/revoke: the key forgotten at once here, and the other web processes told. */
async function revokeKey(ctx: Context, deps: WebDeps, auth: ApiKeyAuth): Promise<void> {
  const user = ctx.state.user as SessionUser;
  const project = projectOfRequest(ctx);
  const id = Number(ctx.params.id);
  if (!Number.isSafeInteger(id) || id <= 0) return keysPage(ctx, deps, { flash: "No such API key." }, 404);
  const revoked = await formAction({
    refuses: ["NotFound"],
    run: () => revokeApiKey(deps.ports.sql, project.id, id, user.id),
    refused: (r) => keysPage(ctx, deps, { flash: "No such API key." }, r.status),
  });
  if (!revoked) return;
  await accessChanged(deps, auth, { keyId: id });
  deps.logger.info("api key revoked", { user_id: user.id, key_id: id });
  ctx.redirect("/settings/api-keys");
}

/**
 * GET/POST /settings: the user's LLM preferences (project_settings: provider, model, temperature), which the
 * /improve page (and the agents service it calls) uses as defaults. The provider list comes from the agents
 * service's GET /providers; when it is unreachable the page still works with free-text values.
 * POST /settings/retention: how many days of runs to keep (stores/retention.ts; empty or 0 = forever).
 * POST /settings/provider-keys, /settings/provider-keys/:provider/delete: the project's own LLM provider key (and
 * server, default model) for its judges (stores/evaluation/provider-keys.ts); the key is never shown again.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { SessionUser, WebDeps } from "../deps.js";
import { audit } from "../../stores/accounts/projects.js";
import { projectOfRequest } from "../auth/project.js";
import { formAction, readForm } from "../forms.js";
import { renderPage, queryParam } from "../common/render.js";
import { loadUserLlmSettings, saveUserLlmSettings, type UserLlmSettings } from "../../stores/user-settings.js";
import { loadRetention, MAX_RETENTION_DAYS, parseRetentionDays, saveRetentionDays } from "../../stores/retention.js";
import { can } from "../../core/access/roles.js";
import { PROVIDER_IDS } from "../../core/agents/contract.js";
import { deleteProviderKey, listProviderKeys, parseProvider, providerKeyWrites, setProviderKey } from "../../stores/evaluation/provider-keys.js";
import { mountPages } from "../route-table.js";

const PROVIDERS_TIMEOUT_MS = 3_000;

interface Provider {
  id: string;
  name: string;
  configured: boolean;
  default_model: string;
  max_temperature: number;
  models: Array<{ id: string }>;
}

async function fetchProviders(deps: WebDeps): Promise<{ providers: Provider[] | null; error: string | null }> {
  const url = `${deps.ports.config.agentsUrl.replace(/\/+$/, "")}/providers`;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(PROVIDERS_TIMEOUT_MS) });
    const body = (await res.json().catch(() => null)) as { providers?: Provider[] } | null;
    if (res.ok && Array.isArray(body?.providers)) return { providers: body.providers, error: null };
    return { providers: null, error: `the agents service answered HTTP ${res.status}` };
  } catch (err) {
    return { providers: null, error: (err as Error).name === "TimeoutError" ? "the agents service did not answer in time" : `the agents service at ${deps.ports.config.agentsUrl} is not reachable` };
  }
}

/** Validates the form against the provider list (when known). Empty fields mean "use the service default". */
export function parseSettings(form: Record<string, string>, providers: Provider[] | null): { settings: UserLlmSettings; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const provider = (form.provider ?? "").trim() || null;
  const model = (form.model ?? "").trim() || null;
  const tempText = (form.temperature ?? "").trim();
  let temperature: number | null = null;
  const entry = provider && providers ? providers.find((p) => p.id === provider) : undefined;
  if (provider && providers && !entry) errors.provider = `Unknown provider “${provider}”; choose one of ${providers.map((p) => p.id).join(", ")}.`;
  if (provider && provider.length > 100) errors.provider = "The provider name is too long.";
  if (model && model.length > 200) errors.model = "The model name is at most 200 characters.";
  if (tempText !== "") {
    temperature = Number(tempText);
    const max = Math.min(2, entry?.max_temperature ?? 2);
    if (!Number.isFinite(temperature) || temperature < 0 || temperature > max) errors.temperature = `Temperature must be a number from 0 to ${max}.`;
  }
  return { settings: { provider, model, temperature }, errors };
}

export function registerSettingsPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: { "GET /settings": settingsPage },
    manage_settings: {
      "POST /settings": saveLlmSettings,
      "POST /settings/retention": saveRetention,
      "POST /settings/provider-keys": saveProviderKey,
      "POST /settings/provider-keys/:provider/delete": removeProviderKey,
    },
  });
}

/** GET /settings, and each form's page when it is refused (`extra`: what the form shows back). */
async function settingsPage(ctx: Context, deps: WebDeps, extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const project = projectOfRequest(ctx);
  const [saved, list, retention, keys] = await Promise.all([
    loadUserLlmSettings(deps.ports.sql, project.id), fetchProviders(deps), loadRetention(deps.ports.sql, project.id), listProviderKeys(deps.ports.sql, project.id),
  ]);
  const flash = queryParam(ctx, "saved") ? "Settings saved." : queryParam(ctx, "retention") ? "Retention saved." : queryParam(ctx, "flash") ?? null;
  renderPage(ctx, "settings.njk", {
    title: "Settings",
    values: { provider: saved.provider ?? "", model: saved.model ?? "", temperature: saved.temperature ?? "" },
    providers: list.providers,
    providers_error: list.error,
    errors: {},
    retention,
    retention_value: retention.days ?? "",
    retention_error: null,
    max_retention_days: MAX_RETENTION_DAYS,
    provider_keys: keys,
    provider_ids: PROVIDER_IDS,
    can_manage: can(project.role, "manage_settings"),
    key_values: { provider: PROVIDER_IDS.find((id) => !keys.some((k) => k.provider === id)) ?? "openai" },
    key_errors: {},
    flash,
    ...extra,
  }, status);
}

/** POST /settings: the LLM preferences, checked against the agents service's provider list when it answers. */
async function saveLlmSettings(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  const form = await readForm(ctx);
  const { providers } = await fetchProviders(deps);
  const { settings, errors } = parseSettings(form, providers);
  if (Object.keys(errors).length) return settingsPage(ctx, deps, { values: form, errors }, 422);
  await saveUserLlmSettings(deps.ports.sql, project.id, settings);
  await audit(deps.ports.sql, project.id, (ctx.state.user as SessionUser).id, "settings.providers", "", { ...settings });
  ctx.status = 303;
  ctx.redirect("/settings?saved=1");
}

/** POST /settings/retention: how many days of runs to keep. */
async function saveRetention(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  const form = await readForm(ctx);
  await formAction({
    refuses: ["ValidationError"],
    run: async () => {
      const days = parseRetentionDays(form.retention_days);
      await saveRetentionDays(deps.ports.sql, project.id, days);
      await audit(deps.ports.sql, project.id, (ctx.state.user as SessionUser).id, "settings.retention", "", { days });
      ctx.status = 303;
      ctx.redirect("/settings?retention=1");
    },
    refused: (r) => settingsPage(ctx, deps, { retention_value: form.retention_days ?? "", retention_error: r.message }, r.status),
  });
}

/** POST /settings/provider-keys: the project's own key for a provider (kept sealed, shown by its last four characters). */
async function saveProviderKey(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  const form = await readForm(ctx);
  await formAction({
    refuses: ["ValidationError"],
    field: "api_key",
    run: async () => {
      const provider = parseProvider(form.provider);
      const saved = await setProviderKey(providerKeyWrites(deps.ports.sql, deps.sessionSecret), project.id, (ctx.state.user as SessionUser).id, provider, form);
      ctx.status = 303;
      ctx.redirect(`/settings?flash=${encodeURIComponent(`The project's ${provider} key (…${saved.key_hint}) is saved: its judges use it from the next call.`)}#provider-keys`);
    },
    refused: (r) => {
      const { api_key: _secret, ...kept } = form; // a refused key is not echoed back into the page
      return settingsPage(ctx, deps, { key_values: kept, key_errors: { [r.field]: r.message } }, r.status);
    },
  });
}

/** POST /settings/provider-keys/:provider/delete: the project's judges use the service's key again. */
async function removeProviderKey(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  await readForm(ctx);
  const provider = parseProvider(ctx.params.provider);
  const removed = await deleteProviderKey(deps.ports.sql, project.id, (ctx.state.user as SessionUser).id, provider);
  ctx.status = 303;
  ctx.redirect(`/settings?flash=${encodeURIComponent(removed ? `The project's ${provider} key is removed: its judges use the service's.` : `The project has no ${provider} key.`)}#provider-keys`);
}

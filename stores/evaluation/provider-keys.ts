/**
 * A project's own LLM provider settings for its judges (docs/EVALUATORS.md, Provider keys): per provider an API key,
 * an optional server (base URL: an OpenAI-compatible one such as vLLM, or a gateway) and an optional default model.
 * A judge call of the project's then uses them instead of agents-service's (evaluation/judging/project-judge.ts
 * withProjectKeys). The key is kept sealed (core/sealed.ts) and never shown again, only its last four characters;
 * a base URL on a private, loopback or link-local address is refused unless the operator allows it
 * (RUNWATCH_ALLOW_PRIVATE_PROVIDER_URLS=1), and agents-service checks it again on every call.
 */
import { PROVIDER_IDS, type ProviderId } from "../../core/agents/contract.js";
import { ValidationError } from "../../core/errors.js";
import { checkTarget, parseTargetUrl, TargetRefused } from "../../core/network/ssrf.js";
import type { Sql } from "../../core/ports/sql.js";
import { SealBroken, sealerFor, type Sealer } from "../../core/sealed.js";
import { audit } from "../accounts/projects.js";

/** What the API and the settings page show of a provider's settings: never the key. */
export interface ProviderKeyView {
  readonly provider: ProviderId;
  /** The key's last four characters ("" for a key shorter than 12). */
  readonly key_hint: string;
  readonly base_url: string | null;
  readonly default_model: string | null;
  readonly updated_at: string;
}

/** What a judge call takes: the key opened. */
export interface ProviderKey {
  readonly provider: ProviderId;
  readonly api_key: string;
  readonly base_url: string | null;
  readonly default_model: string | null;
}

export const providerKeySealer = (sessionSecret: string): Sealer => sealerFor(sessionSecret, "project provider keys");
export const allowPrivateProviderUrls = (env: NodeJS.ProcessEnv = process.env): boolean => env.RUNWATCH_ALLOW_PRIVATE_PROVIDER_URLS === "1";

/** What setting a key needs: the store, the sealer under the server's secret, and whether private servers are allowed. */
export interface ProviderKeyWrites { readonly sql: Sql; readonly sealer: Sealer; readonly allowPrivate: boolean }
export const providerKeyWrites = (sql: Sql, sessionSecret: string): ProviderKeyWrites => ({ sql, sealer: providerKeySealer(sessionSecret), allowPrivate: allowPrivateProviderUrls() });

const MODEL_NAME = /^[A-Za-z0-9][\w.:/@+-]{0,199}$/;
const KEY_TEXT = /^[\x21-\x7e]{1,1000}$/;
/** Keys shorter than this (a placeholder for a keyless server) get no hint: four characters would be most of them. */
const HINTED_KEY_CHARS = 12;

export function parseProvider(v: unknown): ProviderId {
  if (!(PROVIDER_IDS as readonly unknown[]).includes(v)) throw new ValidationError({ field: "provider", message: `provider must be one of ${PROVIDER_IDS.join(", ")}` });
  return v as ProviderId;
}

/**
 * Sets a provider's settings from a PUT /api/provider-keys/{provider} body: {api_key?, base_url?, default_model?}.
 * Without api_key the saved key is kept, for a change of the default model only: a key is never sent to a server it
 * was not entered for, so a new base_url takes the key again (a 422 naming api_key otherwise).
 */
export async function setProviderKey(
  deps: ProviderKeyWrites,
  projectId: number,
  userId: number | null,
  provider: ProviderId,
  body: unknown,
): Promise<ProviderKeyView> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new ValidationError({ message: 'the body must be a JSON object like {"api_key": "sk-…"}' });
  const b = body as Record<string, unknown>;
  const keepKey = b.api_key === undefined || b.api_key === null || b.api_key === "";
  if (!keepKey && (typeof b.api_key !== "string" || !KEY_TEXT.test(b.api_key))) throw new ValidationError({ field: "api_key", message: "api_key must be the provider's key: 1 to 1,000 printable characters, no spaces" });
  let baseUrl: string | null = null;
  if (b.base_url !== undefined && b.base_url !== null && b.base_url !== "") {
    if (typeof b.base_url !== "string" || b.base_url.length > 500) throw new ValidationError({ field: "base_url", message: "base_url must be a URL of at most 500 characters" });
    try {
      const url = parseTargetUrl(b.base_url);
      await checkTarget(url, deps.allowPrivate);
      baseUrl = url.toString().replace(/\/+$/, "");
    } catch (err) {
      if (!(err instanceof TargetRefused)) throw err;
      throw new ValidationError({ field: "base_url", message: `base_url ${err.message}` });
    }
  }
  let model: string | null = null;
  if (b.default_model !== undefined && b.default_model !== null && b.default_model !== "") {
    if (typeof b.default_model !== "string" || !MODEL_NAME.test(b.default_model)) throw new ValidationError({ field: "default_model", message: "default_model must be a model name such as gpt-4.1-mini" });
    model = b.default_model;
  }
  if (keepKey) return changeModel(deps, projectId, userId, provider, baseUrl, model);
  const apiKey = b.api_key as string;
  const hint = apiKey.length >= HINTED_KEY_CHARS ? apiKey.slice(-4) : "";
  const [row] = await deps.sql.query<Record<string, unknown>>(
    `INSERT INTO project_provider_keys (project_id, provider, api_key, key_hint, base_url, default_model, updated_by, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now())
     ON CONFLICT (project_id, provider) DO UPDATE SET api_key = EXCLUDED.api_key, key_hint = EXCLUDED.key_hint, base_url = EXCLUDED.base_url,
       default_model = EXCLUDED.default_model, updated_by = EXCLUDED.updated_by, updated_at = now()
     RETURNING provider, key_hint, base_url, default_model, updated_at`,
    [projectId, provider, deps.sealer.seal(apiKey), hint, baseUrl, model, userId],
  );
  await audit(deps.sql, projectId, userId, "provider_key.set", provider, { key_hint: hint, base_url: baseUrl });
  return toView(row!);
}

/**
 * The saved key kept, its default model changed; its server must stay the one the key was entered for. One statement
 * checks the server and writes, so a server changed meanwhile by another admin is never paired with this request.
 */
async function changeModel(deps: ProviderKeyWrites, projectId: number, userId: number | null, provider: ProviderId, baseUrl: string | null, model: string | null): Promise<ProviderKeyView> {
  const [row] = await deps.sql.query<Record<string, unknown>>(
    `UPDATE project_provider_keys SET default_model = $3, updated_by = $4, updated_at = now()
      WHERE project_id = $1 AND provider = $2 AND base_url IS NOT DISTINCT FROM $5
     RETURNING provider, key_hint, base_url, default_model, updated_at`,
    [projectId, provider, model, userId, baseUrl],
  );
  if (!row) {
    const [saved] = await deps.sql.query(`SELECT 1 FROM project_provider_keys WHERE project_id = $1 AND provider = $2`, [projectId, provider]);
    if (!saved) throw new ValidationError({ field: "api_key", message: `api_key is required: no key is saved for ${provider}` });
    throw new ValidationError({ field: "api_key", message: "api_key is required to change the server: enter the key again, so that it goes only where it was entered for" });
  }
  await audit(deps.sql, projectId, userId, "provider_key.model", provider, { default_model: model });
  return toView(row);
}

export async function deleteProviderKey(sql: Sql, projectId: number, userId: number | null, provider: ProviderId): Promise<boolean> {
  const rows = await sql.query(`DELETE FROM project_provider_keys WHERE project_id = $1 AND provider = $2 RETURNING provider`, [projectId, provider]);
  if (rows.length) await audit(sql, projectId, userId, "provider_key.delete", provider);
  return rows.length > 0;
}

const toView = (r: Record<string, unknown>): ProviderKeyView => ({
  provider: r.provider as ProviderId,
  key_hint: String(r.key_hint),
  base_url: (r.base_url as string | null) ?? null,
  default_model: (r.default_model as string | null) ?? null,
  updated_at: new Date(r.updated_at as string).toISOString(),
});

export async function listProviderKeys(sql: Sql, projectId: number): Promise<ProviderKeyView[]> {
  const rows = await sql.query<Record<string, unknown>>(
    `SELECT provider, key_hint, base_url, default_model, updated_at FROM project_provider_keys WHERE project_id = $1 ORDER BY provider`,
    [projectId],
  );
  return rows.map(toView);
}

/**
 * The project's keys, opened, in PROVIDER_IDS order (the first is a judge's provider when its evaluator names none).
 * A key sealed under another SESSION_SECRET comes back as `broken`: its calls fail until it is entered again.
 */
export async function openProviderKeys(sql: Sql, sealer: Sealer, projectId: number): Promise<Array<ProviderKey | { provider: ProviderId; broken: true }>> {
  const rows = await sql.query<Record<string, unknown>>(
    `SELECT provider, api_key, base_url, default_model FROM project_provider_keys WHERE project_id = $1`,
    [projectId],
  );
  return rows
    .sort((a, b) => PROVIDER_IDS.indexOf(a.provider as ProviderId) - PROVIDER_IDS.indexOf(b.provider as ProviderId))
    .map((r) => {
      const provider = r.provider as ProviderId;
      try {
        return { provider, api_key: sealer.open(String(r.api_key)), base_url: (r.base_url as string | null) ?? null, default_model: (r.default_model as string | null) ?? null };
      } catch (err) {
        if (err instanceof SealBroken) return { provider, broken: true as const };
        throw err;
      }
    });
}

/**
 * agents-service settings that core/config.ts does not carry: LLM provider keys, base URLs and default models,
 * request limits, and the optional Runwatch self-reporting key. Read from the environment here only;
 * tests build an AgentsSettings directly.
 */
import { DEFAULT_MODELS, PROVIDER_IDS, type ProviderId } from "../core/agents/contract.js";
import { envNumber } from "../core/env-number.js";

export { DEFAULT_MODELS, PROVIDER_IDS, type ProviderId };

export interface ProviderSettings {
  readonly apiKey: string | undefined;
  readonly baseUrl: string;
  /** True when OPENAI_BASE_URL (etc.) was set: an OpenAI-compatible server such as Ollama or vLLM. */
  readonly customBaseUrl: boolean;
  readonly defaultModel: string;
}

export interface AgentsSettings {
  readonly providers: Readonly<Record<ProviderId, ProviderSettings>>;
  /** Provider used when a request names none; defaults to the first configured one. */
  readonly defaultProvider: ProviderId | undefined;
  /** Per-attempt timeout of one provider HTTP call. */
  readonly llmTimeoutMs: number;
  /** Retries after the first attempt, on 429 and 5xx. */
  readonly llmMaxRetries: number;
  /** First backoff delay; doubles per retry (with jitter), capped at llmMaxBackoffMs. */
  readonly llmRetryBaseMs: number;
  readonly llmMaxBackoffMs: number;
  /** Longest Retry-After the service will wait out; longer → 503 with that Retry-After passed on. */
  readonly llmMaxRetryAfterMs: number;
  readonly anthropicMaxTokens: number;
  readonly maxCodeChars: number;
  readonly maxInstructionsChars: number;
  /** Concurrent /improve requests; more get 503 busy (LLM calls are long; this bounds memory and cost). */
  readonly maxConcurrent: number;
  /** Self-reporting to Runwatch (one run per /improve) when both are set. */
  readonly runwatch: { readonly apiKey: string; readonly baseUrl: string } | undefined;
  /** A project's provider base URL may reach private, loopback and link-local hosts (RUNWATCH_ALLOW_PRIVATE_PROVIDER_URLS=1). */
  readonly allowPrivateProviderUrls?: boolean;
}

const trimSlash = (u: string) => u.replace(/\/+$/, "");


export const DEFAULT_BASE_URLS: Readonly<Record<ProviderId, string>> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
  gemini: "https://generativelanguage.googleapis.com",
};

export function provider(id: ProviderId, key: string | undefined, base: string | undefined, model: string | undefined): ProviderSettings {
  return {
    apiKey: key || undefined,
    baseUrl: trimSlash(base || DEFAULT_BASE_URLS[id]),
    customBaseUrl: Boolean(base),
    defaultModel: model || DEFAULT_MODELS[id],
  };
}

export function loadAgentsSettings(env: NodeJS.ProcessEnv = process.env): AgentsSettings {
  const num = (name: string, dflt: number) => envNumber(env, name, dflt, { min: 0 });
  const dp = env.AGENTS_DEFAULT_PROVIDER;
  if (dp && !PROVIDER_IDS.includes(dp as ProviderId)) {
    throw new Error(`AGENTS_DEFAULT_PROVIDER must be one of ${PROVIDER_IDS.join(", ")}, got ${JSON.stringify(dp)}`);
  }
  return {
    providers: {
      openai: provider("openai", env.OPENAI_API_KEY, env.OPENAI_BASE_URL, env.OPENAI_MODEL),
      anthropic: provider("anthropic", env.ANTHROPIC_API_KEY, env.ANTHROPIC_BASE_URL, env.ANTHROPIC_MODEL),
      gemini: provider("gemini", env.GEMINI_API_KEY || env.GOOGLE_API_KEY, env.GEMINI_BASE_URL, env.GEMINI_MODEL),
    },
    defaultProvider: (dp as ProviderId) || undefined,
    llmTimeoutMs: num("AGENTS_LLM_TIMEOUT_MS", 120_000),
    llmMaxRetries: num("AGENTS_LLM_MAX_RETRIES", 3),
    llmRetryBaseMs: num("AGENTS_LLM_RETRY_BASE_MS", 500),
    llmMaxBackoffMs: num("AGENTS_LLM_MAX_BACKOFF_MS", 8_000),
    llmMaxRetryAfterMs: num("AGENTS_LLM_MAX_RETRY_AFTER_MS", 30_000),
    anthropicMaxTokens: num("ANTHROPIC_MAX_TOKENS", 8192),
    maxCodeChars: num("AGENTS_MAX_CODE_CHARS", 100_000),
    maxInstructionsChars: num("AGENTS_MAX_INSTRUCTIONS_CHARS", 4_000),
    maxConcurrent: num("AGENTS_MAX_CONCURRENT", 16),
    runwatch:
      env.RUNWATCH_API_KEY && env.RUNWATCH_BASE_URL
        ? { apiKey: env.RUNWATCH_API_KEY, baseUrl: trimSlash(env.RUNWATCH_BASE_URL) }
        : undefined,
    allowPrivateProviderUrls: env.RUNWATCH_ALLOW_PRIVATE_PROVIDER_URLS === "1",
  };
}

/** A provider is usable with a key, or (OpenAI-compatible only) with a custom base URL such as a local Ollama. */
export const isConfigured = (id: ProviderId, p: ProviderSettings): boolean =>
  Boolean(p.apiKey) || (id === "openai" && p.customBaseUrl);

export function resolveDefaultProvider(s: AgentsSettings): ProviderId | undefined {
  if (s.defaultProvider) return s.defaultProvider;
  return PROVIDER_IDS.find((id) => isConfigured(id, s.providers[id]));
}

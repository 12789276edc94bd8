/**
 * The most one judge call may cost, known before it is made: what its project's daily budget reserves for it
 * (evaluation/judging/judge-caps.ts). The model is the request's, else the one agents-service will choose — with a
 * project's key the provider's DEFAULT_MODELS entry, with the service's keys its default provider and model as
 * GET /providers says (read once a minute) — priced by core/agents/prices.ts; its prompt counted at three characters
 * a token (fewer than the usual four: an upper bound is wanted) and its answer at the whole answer limit.
 */
import type { Config } from "../config.js";
import { callAgents, isAgentsFailure, type AgentsFailure } from "./client.js";
import { DEFAULT_MODELS, PROVIDER_IDS, type JudgeRequest, type ProviderId } from "./contract.js";
import { callCost } from "./prices.js";

/** agents-service's choices when a request makes none (GET /providers). */
export interface ServiceDefaults {
  readonly provider: ProviderId | null;
  readonly models: Readonly<Partial<Record<ProviderId, string>>>;
}

/** The answer limit a judge call asks for when it names none (evaluation/judging/evaluate.ts asks this). */
export const JUDGE_ANSWER_TOKENS = 1_024;
const CHARS_PER_TOKEN = 3;
const DEFAULTS_FOR_MS = 60_000;

interface ProvidersBody { default_provider: string | null; providers: Array<{ id: string; default_model: string }> }

/** agents-service's defaults, read at most once a minute per process (a failed read is tried again next call). */
export function serviceDefaults(config: Pick<Config, "agentsUrl">): () => Promise<ServiceDefaults | AgentsFailure> {
  let cached: { at: number; value: Promise<ServiceDefaults | AgentsFailure> } | undefined;
  return () => {
    if (cached && Date.now() - cached.at < DEFAULTS_FOR_MS) return cached.value;
    const value = callAgents<ProvidersBody>(config, "/providers", { timeoutMs: 5_000 }).then((body): ServiceDefaults | AgentsFailure => {
      if (isAgentsFailure(body)) return body;
      const ids = (id: unknown): id is ProviderId => (PROVIDER_IDS as readonly unknown[]).includes(id);
      return {
        provider: ids(body.default_provider) ? body.default_provider : null,
        models: Object.fromEntries(body.providers.filter((p) => ids(p.id)).map((p) => [p.id, p.default_model])),
      };
    });
    cached = { at: Date.now(), value };
    void value.then((v) => { if (isAgentsFailure(v) && cached?.value === value) cached = undefined; });
    return value;
  };
}

/**
 * The provider and model that will answer a judge call naming these (undefined: the call names none; `ownKey`: it
 * brings the project's key); null when the service has no provider to answer it with.
 */
export function judgeTarget(
  call: { readonly provider: ProviderId | undefined; readonly model: string | undefined; readonly ownKey: boolean },
  defaults: ServiceDefaults,
): { provider: ProviderId; model: string } | null {
  const provider = call.provider ?? defaults.provider;
  if (!provider) return null;
  const model = call.model ?? (call.ownKey ? DEFAULT_MODELS[provider] : defaults.models[provider] ?? DEFAULT_MODELS[provider]);
  return { provider, model };
}

/** The most `req` may cost in USD; 0 when its model has no known price (its cost is then counted as 0 too). */
export function judgeCallCeiling(req: JudgeRequest, target: { provider: ProviderId; model: string }): number {
  const tokensIn = Math.ceil((req.system.length + req.user.length + JSON.stringify(req.output.schema).length) / CHARS_PER_TOKEN);
  return callCost(target.provider, target.model, tokensIn, req.max_tokens ?? JUDGE_ANSWER_TOKENS) ?? 0;
}

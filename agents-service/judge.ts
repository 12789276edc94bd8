/**
 * POST /judge (core/agents/contract.ts JudgeRequest → JudgeResponse): one structured completion for an
 * LLM-as-judge evaluator. The caller renders the prompt and checks the answer; this service holds the provider
 * keys, chooses the provider and model, retries 429/5xx with backoff, and prices the call. A reply that is not
 * JSON at all is a 502 malformed_model_answer carrying the raw answer. A request may bring a project's own key (and
 * server) for its provider: that call then uses them instead of the service's; a server on a private, loopback or
 * link-local address is refused (422 provider_url_refused) unless RUNWATCH_ALLOW_PRIVATE_PROVIDER_URLS=1, before the
 * call and by each of its connections (core/network/guarded-fetch.ts), so DNS rebinding cannot reach one.
 */
import { Either, ParseResult, Schema } from "effect";
import type { JudgeRequest, JudgeResponse } from "../core/agents/contract.js";
import { ServiceError } from "./errors.js";
import { chooseProvider } from "./improve.js";
import { PROVIDERS } from "./providers/index.js";
import { PROVIDER_IDS, provider, type AgentsSettings, type ProviderId } from "./settings.js";
import { TargetRefused, checkTarget, parseTargetUrl } from "../core/network/ssrf.js";
import { guardedFetch } from "../core/network/guarded-fetch.js";

export const MAX_JUDGE_PROMPT_CHARS = 400_000;
/** The fetch for a project's own server: each connection checked when it is made, no redirects. */
export const projectServerFetch = guardedFetch({ allowPrivate: false });
const MODEL_NAME = /^[A-Za-z0-9][\w.:/@+-]*$/;

const JudgeRequestSchema = Schema.Struct({
  provider: Schema.optional(Schema.Literal(...PROVIDER_IDS)),
  model: Schema.optional(Schema.String.pipe(Schema.maxLength(200), Schema.pattern(MODEL_NAME))),
  temperature: Schema.optional(Schema.Number.pipe(Schema.finite(), Schema.between(0, 2))),
  system: Schema.String.pipe(Schema.maxLength(20_000)),
  user: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_JUDGE_PROMPT_CHARS)),
  output: Schema.Struct({
    name: Schema.String.pipe(Schema.pattern(/^[a-zA-Z0-9_-]{1,64}$/)),
    description: Schema.String.pipe(Schema.maxLength(1_000)),
    schema: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  }),
  max_tokens: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.between(16, 32_000))),
  connection: Schema.optional(Schema.Struct({
    api_key: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(1_000)),
    base_url: Schema.optional(Schema.String.pipe(Schema.maxLength(500))),
  })),
});
const decode = Schema.decodeUnknownEither(JudgeRequestSchema, { errors: "first", onExcessProperty: "error" });

export function parseJudgeRequest(body: unknown): JudgeRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ServiceError({ status: 400, code: "invalid_body", message: "the body must be a JSON object" });
  }
  const r = decode(body);
  if (Either.isRight(r)) return r.right as JudgeRequest;
  const issue = ParseResult.ArrayFormatter.formatErrorSync(r.left)[0];
  const field = issue?.path.map(String).join(".") || undefined;
  throw new ServiceError({ status: 422, code: "validation_failed", message: `${field ?? "body"}: ${issue?.message ?? "invalid"}`, field });
}

/** The settings for this request (a judge's or a completion's): the service's, or with the request's connection for its provider. */
export async function settingsFor(settings: AgentsSettings, req: Pick<JudgeRequest, "provider" | "connection">): Promise<AgentsSettings> {
  const c = req.connection;
  if (!c) return settings;
  if (!req.provider) throw new ServiceError({ status: 422, code: "validation_failed", message: "provider: required with a connection", field: "provider" });
  if (c.base_url !== undefined) {
    try {
      await checkTarget(parseTargetUrl(c.base_url), settings.allowPrivateProviderUrls ?? false);
    } catch (err) {
      if (!(err instanceof TargetRefused)) throw err;
      throw new ServiceError({ status: 422, code: "provider_url_refused", message: `connection.base_url ${err.message}`, field: "connection.base_url" });
    }
  }
  return { ...settings, providers: { ...settings.providers, [req.provider]: provider(req.provider, c.api_key, c.base_url, undefined) } };
}

export async function judge(deps: { settings: AgentsSettings; fetch: typeof fetch; signal?: AbortSignal }, req: JudgeRequest): Promise<JudgeResponse> {
  const started = performance.now();
  const s = await settingsFor(deps.settings, req);
  const { provider: chosen, model } = chooseProvider(s, req);
  // The check in settingsFor named the host's addresses then; the call connects only to addresses checked at connect.
  const ownServer = req.connection?.base_url !== undefined && !(deps.settings.allowPrivateProviderUrls ?? false);
  const r = await PROVIDERS[chosen as ProviderId].complete(
    {
      settings: s.providers[chosen],
      policy: { timeoutMs: s.llmTimeoutMs, maxRetries: s.llmMaxRetries, baseDelayMs: s.llmRetryBaseMs, maxBackoffMs: s.llmMaxBackoffMs, maxRetryAfterMs: s.llmMaxRetryAfterMs },
      fetch: ownServer ? projectServerFetch : deps.fetch,
      anthropicMaxTokens: s.anthropicMaxTokens,
    },
    { model, temperature: req.temperature, system: req.system, user: req.user, output: req.output, maxTokens: req.max_tokens, signal: deps.signal },
  );
  return { provider: chosen, model: r.model, answer: r.value, raw_answer: r.rawText, usage: r.usage, attempts: r.attempts, duration_ms: Math.round(performance.now() - started) };
}

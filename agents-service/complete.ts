/**
 * POST /complete (core/agents/contract.ts CompleteRequest → CompleteResponse): a plain chat completion of messages
 * the caller rendered — the prompts playground's run. Provider, model, key and server are chosen as for /judge
 * (judge.ts): the request's connection (a project's own key, its server checked against private addresses) or the
 * service's keys; the call retries 429/5xx like every provider call and is priced by genai-prices.
 */
import { Either, ParseResult, Schema } from "effect";
import type { CompleteRequest, CompleteResponse } from "../core/agents/contract.js";
import { ServiceError } from "./errors.js";
import { chooseProvider } from "./improve.js";
import { projectServerFetch, settingsFor } from "./judge.js";
import { PROVIDERS } from "./providers/index.js";
import { PROVIDER_IDS, type AgentsSettings } from "./settings.js";

/** What one playground run may send: a prompt version's bounds (stores/prompt-input.ts), rendered. */
export const MAX_COMPLETE_MESSAGES = 200;
export const MAX_COMPLETE_CHARS = 400_000;
const MODEL_NAME = /^[A-Za-z0-9][\w.:/@+-]*$/;

const CompleteRequestSchema = Schema.Struct({
  provider: Schema.optional(Schema.Literal(...PROVIDER_IDS)),
  model: Schema.optional(Schema.String.pipe(Schema.maxLength(200), Schema.pattern(MODEL_NAME))),
  messages: Schema.Array(Schema.Struct({
    role: Schema.Literal("system", "developer", "user", "assistant"),
    content: Schema.String.pipe(Schema.maxLength(MAX_COMPLETE_CHARS)),
  })).pipe(Schema.minItems(1), Schema.maxItems(MAX_COMPLETE_MESSAGES)),
  temperature: Schema.optional(Schema.Number.pipe(Schema.finite(), Schema.between(0, 2))),
  top_p: Schema.optional(Schema.Number.pipe(Schema.finite(), Schema.between(0, 1))),
  max_tokens: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.between(1, 32_000))),
  connection: Schema.optional(Schema.Struct({
    api_key: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(1_000)),
    base_url: Schema.optional(Schema.String.pipe(Schema.maxLength(500))),
  })),
});
const decode = Schema.decodeUnknownEither(CompleteRequestSchema, { errors: "first", onExcessProperty: "error" });

export function parseCompleteRequest(body: unknown): CompleteRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ServiceError({ status: 400, code: "invalid_body", message: "the body must be a JSON object" });
  }
  const r = decode(body);
  if (Either.isLeft(r)) {
    const issue = ParseResult.ArrayFormatter.formatErrorSync(r.left)[0];
    const field = issue?.path.map(String).join(".") || undefined;
    throw new ServiceError({ status: 422, code: "validation_failed", message: `${field ?? "body"}: ${issue?.message ?? "invalid"}`, field });
  }
  const total = r.right.messages.reduce((n, m) => n + m.content.length, 0);
  if (total > MAX_COMPLETE_CHARS) {
    throw new ServiceError({ status: 422, code: "validation_failed", message: `messages: at most ${MAX_COMPLETE_CHARS} characters in all`, field: "messages" });
  }
  return r.right;
}

export async function complete(deps: { settings: AgentsSettings; fetch: typeof fetch; signal?: AbortSignal }, req: CompleteRequest): Promise<CompleteResponse> {
  const started = performance.now();
  const s = await settingsFor(deps.settings, req);
  const { provider: chosen, model } = chooseProvider(s, req);
  const ownServer = req.connection?.base_url !== undefined && !(deps.settings.allowPrivateProviderUrls ?? false);
  const r = await PROVIDERS[chosen].chat(
    {
      settings: s.providers[chosen],
      policy: { timeoutMs: s.llmTimeoutMs, maxRetries: s.llmMaxRetries, baseDelayMs: s.llmRetryBaseMs, maxBackoffMs: s.llmMaxBackoffMs, maxRetryAfterMs: s.llmMaxRetryAfterMs },
      fetch: ownServer ? projectServerFetch : deps.fetch,
      anthropicMaxTokens: s.anthropicMaxTokens,
    },
    { model, messages: req.messages, temperature: req.temperature, topP: req.top_p, maxTokens: req.max_tokens, signal: deps.signal },
  );
  return { provider: chosen, model: r.model, text: r.text, usage: r.usage, attempts: r.attempts, duration_ms: Math.round(performance.now() - started) };
}

/**
 * OpenAI Chat Completions: POST {base}/chat/completions, `Authorization: Bearer`, structured output through
 * response_format {type: "json_schema", json_schema: {name, strict, schema}}. The base URL is configurable
 * (OPENAI_BASE_URL), so any OpenAI-compatible server works: Ollama (http://localhost:11434/v1), vLLM, LM Studio.
 */
import { Either } from "effect";
import { parseJsonText } from "../answer.js";
import { malformedAnswer } from "../errors.js";
import { PRICE_PROVIDER } from "../../core/agents/prices.js";
import { usageAndCost } from "../pricing.js";
import { postJson } from "./http.js";
import type { Provider, ProviderContext } from "./types.js";

interface ChatCompletion {
  model?: string;
  choices?: Array<{ message?: { content?: string | null; refusal?: string | null }; finish_reason?: string }>;
}

/** POST {base}/chat/completions with the key, as the judge call and a plain chat both send it. */
function postCompletion(ctx: ProviderContext, body: Record<string, unknown>, signal: AbortSignal | undefined) {
  const headers: Record<string, string> = {};
  if (ctx.settings.apiKey) headers.authorization = `Bearer ${ctx.settings.apiKey}`;
  return postJson({ provider: "OpenAI", url: `${ctx.settings.baseUrl}/chat/completions`, headers, body, policy: ctx.policy, fetch: ctx.fetch, signal });
}

/** The first choice's text, its refusal or a missing message an error saying so; `cut` refuses a cut-off answer too. */
function choiceText(completion: ChatCompletion, cut: boolean): string {
  const choice = completion?.choices?.[0];
  if (!choice?.message) throw malformedAnswer("OpenAI", "the response has no choices[0].message");
  if (choice.message.refusal) throw malformedAnswer("OpenAI", `the model refused: ${choice.message.refusal}`);
  if (cut && choice.finish_reason === "length") throw malformedAnswer("OpenAI", "the answer was cut off (finish_reason: length)");
  const text = choice.message.content;
  if (typeof text !== "string") throw malformedAnswer("OpenAI", "choices[0].message.content is not text");
  return text;
}

export const openai: Provider = {
  id: "openai",
  name: "OpenAI",
  models: ["gpt-4.1-mini", "gpt-4.1", "gpt-4o-mini", "gpt-4o", "gpt-5-mini", "gpt-5"],
  maxTemperature: 2,
  priceProvider: PRICE_PROVIDER.openai,
  async complete(ctx, req) {
    const { body, attempts } = await postCompletion(ctx, {
      model: req.model,
      messages: [
        { role: "system", content: req.system },
        { role: "user", content: req.user },
      ],
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
      ...(req.maxTokens !== undefined ? { max_completion_tokens: req.maxTokens } : {}),
      response_format: { type: "json_schema", json_schema: { name: req.output.name, strict: true, schema: req.output.schema } },
    }, req.signal);
    const completion = body as ChatCompletion;
    const text = choiceText(completion, true);
    const value = parseJsonText(text);
    if (Either.isLeft(value)) throw malformedAnswer("OpenAI", value.left, text);
    const model = completion.model ?? req.model;
    return { value: value.right, rawText: text, model, usage: usageAndCost("openai", "chat", body, model), attempts };
  },
  async chat(ctx, req) {
    const { body, attempts } = await postCompletion(ctx, {
      model: req.model,
      messages: req.messages,
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
      ...(req.topP !== undefined ? { top_p: req.topP } : {}),
      ...(req.maxTokens !== undefined ? { max_completion_tokens: req.maxTokens } : {}),
    }, req.signal);
    const completion = body as ChatCompletion;
    // A chat answer cut at max_tokens is still the answer the playground shows.
    const text = choiceText(completion, false);
    const model = completion.model ?? req.model;
    return { text, model, usage: usageAndCost("openai", "chat", body, model), attempts };
  },
};

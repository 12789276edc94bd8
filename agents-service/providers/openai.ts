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
import type { Provider } from "./types.js";

interface ChatCompletion {
  model?: string;
  choices?: Array<{ message?: { content?: string | null; refusal?: string | null }; finish_reason?: string }>;
}

export const openai: Provider = {
  id: "openai",
  name: "OpenAI",
  models: ["gpt-4.1-mini", "gpt-4.1", "gpt-4o-mini", "gpt-4o", "gpt-5-mini", "gpt-5"],
  maxTemperature: 2,
  priceProvider: PRICE_PROVIDER.openai,
  async complete(ctx, req) {
    const headers: Record<string, string> = {};
    if (ctx.settings.apiKey) headers.authorization = `Bearer ${ctx.settings.apiKey}`;
    const { body, attempts } = await postJson({
      provider: "OpenAI",
      url: `${ctx.settings.baseUrl}/chat/completions`,
      headers,
      body: {
        model: req.model,
        messages: [
          { role: "system", content: req.system },
          { role: "user", content: req.user },
        ],
        ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
        ...(req.maxTokens !== undefined ? { max_completion_tokens: req.maxTokens } : {}),
        response_format: { type: "json_schema", json_schema: { name: req.output.name, strict: true, schema: req.output.schema } },
      },
      policy: ctx.policy,
      fetch: ctx.fetch,
      signal: req.signal,
    });
    const completion = body as ChatCompletion;
    const choice = completion?.choices?.[0];
    if (!choice?.message) throw malformedAnswer("OpenAI", "the response has no choices[0].message");
    if (choice.message.refusal) throw malformedAnswer("OpenAI", `the model refused: ${choice.message.refusal}`);
    if (choice.finish_reason === "length") throw malformedAnswer("OpenAI", "the answer was cut off (finish_reason: length)");
    const text = choice.message.content;
    if (typeof text !== "string") throw malformedAnswer("OpenAI", "choices[0].message.content is not text");
    const value = parseJsonText(text);
    if (Either.isLeft(value)) throw malformedAnswer("OpenAI", value.left, text);
    const model = completion.model ?? req.model;
    return { value: value.right, rawText: text, model, usage: usageAndCost("openai", "chat", body, model), attempts };
  },
  async chat(ctx, req) {
    const headers: Record<string, string> = {};
    if (ctx.settings.apiKey) headers.authorization = `Bearer ${ctx.settings.apiKey}`;
    const { body, attempts } = await postJson({
      provider: "OpenAI",
      url: `${ctx.settings.baseUrl}/chat/completions`,
      headers,
      body: {
        model: req.model,
        messages: req.messages,
        ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
        ...(req.topP !== undefined ? { top_p: req.topP } : {}),
        ...(req.maxTokens !== undefined ? { max_completion_tokens: req.maxTokens } : {}),
      },
      policy: ctx.policy,
      fetch: ctx.fetch,
      signal: req.signal,
    });
    const completion = body as ChatCompletion;
    const message = completion?.choices?.[0]?.message;
    if (!message) throw malformedAnswer("OpenAI", "the response has no choices[0].message");
    if (message.refusal) throw malformedAnswer("OpenAI", `the model refused: ${message.refusal}`);
    if (typeof message.content !== "string") throw malformedAnswer("OpenAI", "choices[0].message.content is not text");
    const model = completion.model ?? req.model;
    return { text: message.content, model, usage: usageAndCost("openai", "chat", body, model), attempts };
  },
};

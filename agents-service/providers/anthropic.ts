/**
 * Anthropic Messages API: POST {base}/v1/messages with x-api-key and anthropic-version. Structured output
 * through a forced tool call: one tool whose input_schema is the answer schema, tool_choice {type: "tool"};
 * the answer is the tool_use block's `input`.
 */
import { malformedAnswer, ServiceError } from "../errors.js";
import { PRICE_PROVIDER } from "../../core/agents/prices.js";
import { usageAndCost } from "../pricing.js";
import { postJson } from "./http.js";
import type { Provider, ProviderContext } from "./types.js";

export const ANTHROPIC_VERSION = "2023-06-01";

interface Message {
  model?: string;
  content?: Array<{ type: string; name?: string; input?: unknown; text?: string }>;
  stop_reason?: string | null;
}

/** POST {base}/v1/messages with the key and API version, as the judge call and a plain chat both send it. */
const postMessages = (ctx: ProviderContext, body: Record<string, unknown>, signal: AbortSignal | undefined) =>
  postJson({
    provider: "Anthropic", url: `${ctx.settings.baseUrl}/v1/messages`,
    headers: { "x-api-key": ctx.settings.apiKey ?? "", "anthropic-version": ANTHROPIC_VERSION },
    body, policy: ctx.policy, fetch: ctx.fetch, signal,
  });

export const anthropic: Provider = {
  id: "anthropic",
  name: "Anthropic",
  models: ["claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-5", "claude-opus-4-1"],
  maxTemperature: 1,
  priceProvider: PRICE_PROVIDER.anthropic,
  async complete(ctx, req) {
    const { body, attempts } = await postMessages(ctx, {
      model: req.model,
      max_tokens: req.maxTokens ?? ctx.anthropicMaxTokens,
      system: req.system,
      messages: [{ role: "user", content: req.user }],
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
      tools: [{ name: req.output.name, description: req.output.description, input_schema: req.output.schema }],
      tool_choice: { type: "tool", name: req.output.name },
    }, req.signal);
    const message = body as Message;
    const text = (message?.content ?? []).filter((c) => c.type === "text").map((c) => c.text ?? "").join("");
    if (message?.stop_reason === "max_tokens") {
      throw malformedAnswer("Anthropic", `the answer was cut off at max_tokens (${req.maxTokens ?? ctx.anthropicMaxTokens}); raise ANTHROPIC_MAX_TOKENS`, text);
    }
    const tool = message?.content?.find((c) => c.type === "tool_use" && c.name === req.output.name);
    if (!tool) throw malformedAnswer("Anthropic", `no ${req.output.name} tool_use block in the response`, text);
    const model = message.model ?? req.model;
    return { value: tool.input, rawText: JSON.stringify(tool.input ?? null), model, usage: usageAndCost("anthropic", "default", body, model), attempts };
  },
  async chat(ctx, req) {
    // The Messages API takes the system prompt apart from the turns, and a developer message is a system one here.
    const system = req.messages.filter((m) => m.role === "system" || m.role === "developer").map((m) => m.content).join("\n\n");
    const turns = req.messages.filter((m) => m.role === "user" || m.role === "assistant").map((m) => ({ role: m.role, content: m.content }));
    if (turns[0]?.role !== "user") throw new ServiceError({ status: 422, code: "validation_failed", message: "messages: Anthropic needs a user message before any assistant message", field: "messages" });
    const { body, attempts } = await postMessages(ctx, {
      model: req.model,
      max_tokens: req.maxTokens ?? ctx.anthropicMaxTokens,
      ...(system ? { system } : {}),
      messages: turns,
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
      ...(req.topP !== undefined ? { top_p: req.topP } : {}),
    }, req.signal);
    const message = body as Message;
    if (!Array.isArray(message?.content)) throw malformedAnswer("Anthropic", "the response has no content");
    const text = message.content.filter((c) => c.type === "text").map((c) => c.text ?? "").join("");
    const model = message.model ?? req.model;
    return { text, model, usage: usageAndCost("anthropic", "default", body, model), attempts };
  },
};

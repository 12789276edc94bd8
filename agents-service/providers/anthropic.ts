/**
 * Anthropic Messages API: POST {base}/v1/messages with x-api-key and anthropic-version. Structured output
 * through a forced tool call: one tool whose input_schema is the answer schema, tool_choice {type: "tool"};
 * the answer is the tool_use block's `input`.
 */
import { Either } from "effect";
import { ANSWER_JSON_SCHEMA, ANSWER_NAME, validateAnswer } from "../answer.js";
import { malformedAnswer } from "../errors.js";
import { usageAndCost } from "../pricing.js";
import { postJson } from "./http.js";
import type { Provider } from "./types.js";

export const ANTHROPIC_VERSION = "2023-06-01";

interface Message {
  model?: string;
  content?: Array<{ type: string; name?: string; input?: unknown; text?: string }>;
  stop_reason?: string | null;
}

export const anthropic: Provider = {
  id: "anthropic",
  name: "Anthropic",
  models: ["claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-5", "claude-opus-4-1"],
  maxTemperature: 1,
  priceProvider: "anthropic",
  async complete(ctx, req) {
    const { body, attempts } = await postJson({
      provider: "Anthropic",
      url: `${ctx.settings.baseUrl}/v1/messages`,
      headers: { "x-api-key": ctx.settings.apiKey ?? "", "anthropic-version": ANTHROPIC_VERSION },
      body: {
        model: req.model,
        max_tokens: ctx.anthropicMaxTokens,
        system: req.system,
        messages: [{ role: "user", content: req.user }],
        ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
        tools: [
          {
            name: ANSWER_NAME,
            description: "Submit the review: the suggestions and the complete improved code.",
            input_schema: ANSWER_JSON_SCHEMA,
          },
        ],
        tool_choice: { type: "tool", name: ANSWER_NAME },
      },
      policy: ctx.policy,
      fetch: ctx.fetch,
      signal: req.signal,
    });
    const message = body as Message;
    if (message?.stop_reason === "max_tokens") {
      throw malformedAnswer("Anthropic", `the answer was cut off at max_tokens (${ctx.anthropicMaxTokens}); raise ANTHROPIC_MAX_TOKENS`);
    }
    const tool = message?.content?.find((c) => c.type === "tool_use" && c.name === ANSWER_NAME);
    if (!tool) throw malformedAnswer("Anthropic", `no ${ANSWER_NAME} tool_use block in the response`);
    const answer = validateAnswer(tool.input);
    if (Either.isLeft(answer)) throw malformedAnswer("Anthropic", answer.left);
    const model = message.model ?? req.model;
    return { answer: answer.right, model, usage: usageAndCost("anthropic", "default", body, model), attempts };
  },
};

/**
 * The playground's run of one prompt version (or a draft of one), before any provider is asked: its variables
 * filled, its messages as a chat completion takes them, its model config read into the completion's few settings.
 * Everything refused here is the caller's input and names its field (`variables.question`, `prompt.2.role`,
 * `config.parameters.temperature`); only temperature, top_p and max_tokens of the parameters reach the provider.
 */
import { PROVIDER_IDS, type ChatMessage, type CompleteRequest, type ProviderId } from "../core/agents/contract.js";
import { ValidationError } from "../core/errors.js";
import type { PromptConfigValue, PromptContent } from "../stores/prompt-input.js";
import { compilePrompt } from "./template.js";

/**
 * The answer limit when the version names none: a run's most possible cost must be known before it is made (the
 * project's daily budget reserves it), so no run goes without one.
 */
export const PLAYGROUND_ANSWER_TOKENS = 2_048;
export const MAX_PLAYGROUND_ANSWER_TOKENS = 32_000;
const MODEL_NAME = /^[A-Za-z0-9][\w.:/@+-]{0,199}$/;

/** The prompt with `variables` filled, as chat messages (a text prompt is one user message). */
export function playgroundMessages(prompt: PromptContent, variables: Readonly<Record<string, unknown>>): ChatMessage[] {
  const filled = compilePrompt(prompt, variables);
  if (typeof filled === "string") return [{ role: "user", content: filled }];
  return filled.map((m, i) => {
    if (m.role === "tool") {
      throw new ValidationError({ field: `prompt.${i}.role`, message: "the playground runs system, developer, user and assistant messages: a tool message needs the tool call it answers" });
    }
    return { role: m.role, content: m.content };
  });
}

const numberParam = (params: Readonly<Record<string, unknown>>, names: readonly string[], min: number, max: number, int = false): number | undefined => {
  for (const name of names) {
    const v = params[name];
    if (v === undefined || v === null) continue;
    if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max || (int && !Number.isInteger(v))) {
      throw new ValidationError({ field: `config.parameters.${name}`, message: `${name} must be ${int ? "a whole number" : "a number"} from ${min} to ${max}` });
    }
    return v;
  }
  return undefined;
};

/** The completion a version's config asks for (no key: agents-service or the project's keys choose it). */
export function playgroundRequest(prompt: PromptContent, config: PromptConfigValue, variables: Readonly<Record<string, unknown>>): CompleteRequest {
  const messages = playgroundMessages(prompt, variables);
  if (!messages.some((m) => m.content.trim() !== "")) throw new ValidationError({ field: "prompt", message: "the rendered prompt is empty" });
  const provider = config.provider;
  if (provider !== undefined && !(PROVIDER_IDS as readonly string[]).includes(provider)) {
    throw new ValidationError({ field: "config.provider", message: `the playground runs ${PROVIDER_IDS.join(", ")} (an OpenAI-compatible server is the project's openai key with its base URL), not ${JSON.stringify(provider)}` });
  }
  if (config.model !== undefined && !MODEL_NAME.test(config.model)) {
    throw new ValidationError({ field: "config.model", message: "model must be a model name such as gpt-4.1-mini" });
  }
  const params = config.parameters ?? {};
  const temperature = numberParam(params, ["temperature"], 0, 2);
  const topP = numberParam(params, ["top_p"], 0, 1);
  const maxTokens = numberParam(params, ["max_tokens", "max_completion_tokens", "max_output_tokens"], 1, MAX_PLAYGROUND_ANSWER_TOKENS, true);
  return {
    ...(provider ? { provider: provider as ProviderId } : {}),
    ...(config.model ? { model: config.model } : {}),
    messages,
    ...(temperature !== undefined ? { temperature } : {}),
    ...(topP !== undefined ? { top_p: topP } : {}),
    max_tokens: maxTokens ?? PLAYGROUND_ANSWER_TOKENS,
  };
}

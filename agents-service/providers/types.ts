import type { ProviderId, ProviderSettings } from "../settings.js";
import type { RetryPolicy } from "./http.js";
import type { Usage } from "../pricing.js";
import type { ChatMessage } from "../../core/agents/contract.js";

/** The structured answer asked for: a JSON Schema object in the strict form OpenAI requires (every property required, no extras). */
export interface OutputSchema {
  readonly name: string;
  /** Shown to the model (Anthropic's tool description). */
  readonly description: string;
  readonly schema: Readonly<Record<string, unknown>>;
}

export interface CompletionRequest {
  readonly model: string;
  readonly temperature: number | undefined;
  readonly system: string;
  readonly user: string;
  readonly output: OutputSchema;
  /** Answer length cap (Anthropic requires one; the others use it when given). */
  readonly maxTokens?: number;
  readonly signal?: AbortSignal;
}

export interface CompletionResult {
  /** The answer as JSON, not yet checked against the schema (providers' structured output is best effort). */
  readonly value: unknown;
  /** The answer as the model gave it: its text, or the tool call's input as JSON. */
  readonly rawText: string;
  /** The model that answered, as the provider reports it (may be a dated snapshot of the requested one). */
  readonly model: string;
  readonly usage: Usage;
  readonly attempts: number;
}

/** A plain chat completion (POST /complete, the prompts playground): the messages as given, the answer as text. */
export interface ChatRequest {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly temperature: number | undefined;
  readonly topP?: number;
  readonly maxTokens?: number;
  readonly signal?: AbortSignal;
}

export interface ChatResult {
  readonly text: string;
  readonly model: string;
  readonly usage: Usage;
  readonly attempts: number;
}

export interface ProviderContext {
  readonly settings: ProviderSettings;
  readonly policy: RetryPolicy;
  readonly fetch: typeof fetch;
  readonly anthropicMaxTokens: number;
}

export interface ProviderInfo {
  readonly id: ProviderId;
  readonly name: string;
  /** Models offered in the dashboard; any other model name the provider accepts works too. */
  readonly models: readonly string[];
  /** Highest temperature the API accepts. */
  readonly maxTemperature: number;
  /** genai-prices provider id, for cost. */
  readonly priceProvider: string;
}

export interface Provider extends ProviderInfo {
  complete(ctx: ProviderContext, req: CompletionRequest): Promise<CompletionResult>;
  chat(ctx: ProviderContext, req: ChatRequest): Promise<ChatResult>;
}

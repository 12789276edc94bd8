import type { ProviderId, ProviderSettings } from "../settings.js";
import type { RetryPolicy } from "./http.js";
import type { ModelAnswer } from "../answer.js";
import type { Usage } from "../pricing.js";

export interface CompletionRequest {
  readonly model: string;
  readonly temperature: number | undefined;
  readonly system: string;
  readonly user: string;
  readonly signal?: AbortSignal;
}

export interface CompletionResult {
  readonly answer: ModelAnswer;
  /** The model that answered, as the provider reports it (may be a dated snapshot of the requested one). */
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
}

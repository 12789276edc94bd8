/**
 * The HTTP contract between web (/improve, server side) and agents-service (POST /improve): what both sides
 * must agree on, kept below both so neither imports the other. agents-service's modules re-export these types.
 */
export const PROVIDER_IDS = ["openai", "anthropic", "gemini"] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

/** Each provider's model when neither the request nor the service's settings (OPENAI_MODEL, …) name one. */
export const DEFAULT_MODELS: Readonly<Record<ProviderId, string>> = {
  openai: "gpt-4.1-mini",
  anthropic: "claude-sonnet-4-5",
  gemini: "gemini-2.5-flash",
};

export const SEVERITIES = ["low", "medium", "high"] as const;
export type Severity = (typeof SEVERITIES)[number];

/** How the language was decided: given by the caller, the guesslang model, syntax markers, or the fallback. */
export type DetectionMethod = "caller" | "model" | "model+heuristics" | "heuristics" | "fallback";

export interface Usage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  /** null when the model has no known price. */
  readonly cost_usd: number | null;
}

export interface ImproveResponse {
  readonly language: string;
  readonly confidence: number;
  readonly detection: { readonly method: DetectionMethod; readonly candidates: ReadonlyArray<{ language: string; score: number }> };
  readonly provider: ProviderId;
  readonly model: string;
  readonly suggestions: ReadonlyArray<{ title: string; explanation: string; severity: Severity }>;
  readonly improved_code: string;
  /** Unified diff from the submitted code to improved_code ("" when unchanged). */
  readonly diff: string;
  readonly usage: Usage;
  readonly duration_ms: number;
}

/**
 * POST /judge (web and the evaluation worker → agents-service): one structured completion for an LLM-as-judge
 * evaluator (docs/EVALUATION.md). agents-service holds the provider keys and base URLs; the caller sends the
 * rendered prompt and the answer's JSON Schema, and checks the answer itself.
 */
export interface JudgeRequest {
  /** Default: the service's default provider. */
  readonly provider?: ProviderId;
  /** Default: the provider's default model. */
  readonly model?: string;
  readonly temperature?: number;
  readonly system: string;
  readonly user: string;
  readonly output: { readonly name: string; readonly description: string; readonly schema: Record<string, unknown> };
  readonly max_tokens?: number;
  /**
   * The project's own key (and, optionally, server) for `provider`, used instead of the service's: a project's
   * provider settings (docs/EVALUATORS.md). `provider` is required with it.
   */
  readonly connection?: JudgeConnection;
}

export interface JudgeConnection {
  readonly api_key: string;
  /** An OpenAI-compatible (or the provider's) server; default the provider's public API. */
  readonly base_url?: string;
}

export interface JudgeResponse {
  readonly provider: ProviderId;
  readonly model: string;
  /** The answer as JSON, not yet checked (the caller checks it against its output definition). */
  readonly answer: unknown;
  /** The answer as the model gave it. */
  readonly raw_answer: string;
  readonly usage: Usage;
  readonly attempts: number;
  readonly duration_ms: number;
}

/** Error codes of POST /judge (and /improve) worth another try later: the provider or the service was not available. */
export const RETRYABLE_AGENT_ERRORS: ReadonlySet<string> = new Set([
  "provider_timeout", "provider_unreachable", "provider_rate_limited", "provider_unavailable", "busy", "no_provider_configured",
]);

/** One message of a chat completion (POST /complete): the prompt's roles, `developer` sent as `system` where a provider lacks it. */
export interface ChatMessage {
  readonly role: "system" | "developer" | "user" | "assistant";
  readonly content: string;
}

/**
 * POST /complete (web → agents-service): a plain chat completion of rendered messages, the prompts playground's run
 * (docs/PROMPTS.md, Playground). Provider, model, key and server are chosen as for POST /judge.
 */
export interface CompleteRequest {
  readonly provider?: ProviderId;
  readonly model?: string;
  readonly messages: readonly ChatMessage[];
  readonly temperature?: number;
  readonly max_tokens?: number;
  readonly top_p?: number;
  readonly connection?: JudgeConnection;
}

export interface CompleteResponse {
  readonly provider: ProviderId;
  readonly model: string;
  readonly text: string;
  readonly usage: Usage;
  readonly attempts: number;
  readonly duration_ms: number;
}

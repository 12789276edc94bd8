/**
 * The HTTP contract between web (/improve, server side) and agents-service (POST /improve): what both sides
 * must agree on, kept below both so neither imports the other. agents-service's modules re-export these types.
 */
export const PROVIDER_IDS = ["openai", "anthropic", "gemini"] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

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

/**
 * What LLM calls cost, from @pydantic/genai-prices' bundled, offline price table: the one source for what
 * agents-service charges a call (agents-service/pricing.ts) and lists on GET /providers, what a judge call reserves
 * of its project's daily budget before it is made (evaluation/judging/judge-caps.ts), and what a backfill is
 * estimated to cost (web/evaluation/backfill.ts). A model the table does not know (a local model) has no price.
 */
import { calcPrice } from "@pydantic/genai-prices";
import type { ProviderId } from "./contract.js";

/** genai-prices' id of each provider. */
export const PRICE_PROVIDER: Readonly<Record<ProviderId, string>> = { openai: "openai", anthropic: "anthropic", gemini: "google" };

/** USD per million tokens. */
export interface ModelPrice {
  readonly input_per_mtok: number;
  readonly output_per_mtok: number;
}

/** A model's price by genai-prices' provider id; null when the table does not know it. */
export function modelPrice(priceProviderId: string, model: string): ModelPrice | null {
  try {
    // Priced on 1k tokens and scaled: a million-token prompt would hit long-context tiers (e.g. > 200k tokens).
    const p = calcPrice({ input_tokens: 1000, output_tokens: 1000 }, model, { providerId: priceProviderId });
    return p ? { input_per_mtok: round(p.input_price * 1000), output_per_mtok: round(p.output_price * 1000) } : null;
  } catch {
    return null;
  }
}

/** USD for a call of `model` on `provider` with these tokens; null when its price is not known. */
export function callCost(provider: ProviderId, model: string, tokensIn: number, tokensOut: number): number | null {
  const p = modelPrice(PRICE_PROVIDER[provider], model);
  return p ? (tokensIn * p.input_per_mtok + tokensOut * p.output_per_mtok) / 1e6 : null;
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

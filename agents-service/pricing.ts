/**
 * Token usage and cost from a provider's raw response, through @pydantic/genai-prices (its bundled, offline
 * price table and its own usage extractors for each API flavour). Unknown models (e.g. a local Ollama model)
 * have cost null rather than a made-up 0.
 */
import { calcPrice, extractUsage, findProvider } from "@pydantic/genai-prices";

import type { Usage } from "../core/agents/contract.js";

export type { Usage };

export function usageAndCost(priceProviderId: string, apiFlavor: string, response: unknown, model: string): Usage {
  const provider = findProvider({ providerId: priceProviderId });
  if (!provider) return { prompt_tokens: 0, completion_tokens: 0, cost_usd: null };
  let usage: Record<string, number | undefined>;
  try {
    usage = extractUsage(provider, response, apiFlavor).usage;
  } catch {
    return { prompt_tokens: 0, completion_tokens: 0, cost_usd: null };
  }
  let cost: number | null = null;
  try {
    const price = calcPrice(usage, model, { provider });
    if (price) cost = Math.round(price.total_price * 1e9) / 1e9;
  } catch {
    cost = null;
  }
  return { prompt_tokens: usage.input_tokens ?? 0, completion_tokens: usage.output_tokens ?? 0, cost_usd: cost };
}

/** USD per million tokens (input, output) for a model, for /providers: the price web reserves and estimates with. */
export { modelPrice } from "../core/agents/prices.js";

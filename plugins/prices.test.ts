import { calcPrice, findProvider, type Provider } from "@pydantic/genai-prices";
import { describe, expect, it } from "vitest";
import { computeCost } from "./prices.js";

/** Every provider of the bundled table we can name (findProvider has no listing). */
const PROVIDER_IDS = [
  "anthropic", "arcee", "avian", "aws", "azure", "baseten", "cohere", "deepseek", "doubleword", "fireworks", "google", "groq",
  "huggingface_cerebras", "huggingface_fireworks-ai", "huggingface_groq", "huggingface_hyperbolic", "huggingface_nebius",
  "huggingface_novita", "huggingface_nscale", "huggingface_ovhcloud", "huggingface_publicai", "huggingface_sambanova",
  "huggingface_together", "minimax", "mistral", "modal", "novita", "openai", "openrouter", "ovhcloud", "perplexity",
  "quicksilverpro", "together", "typesafe", "voyageai", "x-ai", "zai", "zhipuai",
];

/** A deterministic pseudo-random sequence (a test that fails must fail again). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

/** calcPrice on every call, as computeCost did before it resolved models once: the reference. */
function table(model: string, provider: string, input: number, output: number, cacheRead: number, cacheWrite: number, at: Date): number | undefined {
  const total = cacheRead + cacheWrite > input ? input + cacheRead + cacheWrite : input;
  const usage = { input_tokens: total, output_tokens: output, cache_read_tokens: cacheRead || undefined, cache_write_tokens: cacheWrite || undefined };
  const price = (modelId: string, providerId?: string) => {
    try {
      return calcPrice(usage, modelId, { providerId, timestamp: at })?.total_price;
    } catch {
      return undefined;
    }
  };
  // The provider's name for it, the bare name (another provider's model), then a provider-qualified name split.
  const m = /^([\w.-]+)[/:](.+)$/.exec(model);
  return price(model, provider) ?? price(model) ?? (m ? (price(m[2]!, m[1]!) ?? price(m[2]!)) : undefined);
}

describe("computeCost", () => {
  it("gives calcPrice's price for every model of the table, in every input tier, at any time", () => {
    const providers = PROVIDER_IDS.map((id) => findProvider({ providerId: id })).filter((p): p is Provider => p !== undefined);
    const next = random(20261126);
    // Inputs on both sides of the usual tier thresholds (128k, 200k, 272k) and at them exactly.
    const inputs = [0, 1, 37, 1_200, 127_999, 128_000, 128_001, 199_999, 200_000, 200_001, 272_001, 1_500_000];
    let compared = 0;
    for (const provider of providers) {
      for (const model of provider.models) {
        for (const input of inputs) {
          const output = Math.floor(next() * 20_000);
          const cacheRead = next() < 0.5 ? Math.floor(next() * input) : 0;
          const cacheWrite = next() < 0.3 ? Math.floor(next() * (input - cacheRead)) : 0;
          // Times of day on both sides of off-peak windows, dates across the table's start_date constraints.
          const at = new Date(Date.UTC(2025, Math.floor(next() * 24), 1 + Math.floor(next() * 28), Math.floor(next() * 24), Math.floor(next() * 60)));
          const expected = table(model.id, provider.id, input, output, cacheRead, cacheWrite, at);
          const got = computeCost(model.id, input, output, at.toISOString(), { provider: provider.id, cachedTokens: cacheRead, cacheWriteTokens: cacheWrite });
          if (expected === undefined) expect(got, `${provider.id} ${model.id} ${input}`).toBeUndefined();
          else expect(Math.abs(got! - expected), `${provider.id} ${model.id} ${input}: ${got} vs ${expected}`).toBeLessThanOrEqual(1e-9 * Math.max(expected, 1e-12));
          compared++;
        }
      }
    }
    expect(providers.length).toBeGreaterThan(30);
    expect(compared).toBeGreaterThan(5_000);
  });

  it("resolves a model once per name and provider: unknown and provider-qualified names alike", () => {
    expect(computeCost("no-such-model-xyz", 10, 10)).toBeUndefined();
    expect(computeCost("no-such-model-xyz", 10, 10, undefined, { provider: "no-such-provider" })).toBeUndefined();
    expect(computeCost("openai/gpt-4o", 1_000_000, 0)).toBeCloseTo(2.5, 9);
    expect(computeCost("anthropic:claude-sonnet-4-5", 1_000_000, 0)).toBeCloseTo(
      calcPrice({ input_tokens: 1_000_000, output_tokens: 0 }, "claude-sonnet-4-5", { providerId: "anthropic" })!.total_price, 9);
    // A hostile model name is just unknown.
    expect(computeCost("\u0000\ud800".repeat(1000), 10, 10, undefined, { provider: "x".repeat(10_000) })).toBeUndefined();
  });
});

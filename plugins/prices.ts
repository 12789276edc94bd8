/**
 * The price of one model call, from the bundled price table of @pydantic/genai-prices.
 *
 * calcPrice matches the provider and the model and re-validates the table's price units on every call, which took more
 * than the rest of an LLM span's way through the pipeline (docs/BENCHMARKS.md, "Pipeline thread, per span"). So each
 * model name (with its provider) is resolved once, and where its price is the same at every time of day and date, the
 * call's price is worked out from coefficients the table itself gave:
 *
 *   within one input tier, price = c + a·input + b·output + r·cache_read + w·cache_write
 *
 * (genai-prices prices each unit linearly, a tier by the call's input tokens: `a > tier.start`). The coefficients
 * of a tier come from calcPrice at points inside it and are checked against calcPrice at one more point before they
 * are used; a model whose prices change with the time (a `start_date` or `time_of_date` constraint), or whose check
 * fails, is priced by calcPrice on every call, as before. prices.test.ts compares the two over the whole table.
 */
import { calcPrice, type ModelInfo, type PriceCalculation, type Usage } from "@pydantic/genai-prices";

/** A call's token counts, as the pipeline has them (cache reads and writes are parts of the input). */
export interface CallTokens {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/**
 * Prices a call of one resolved model at `at` (ISO 8601); undefined when the table refuses the usage. The time is
 * parsed only by the pricers that need it (calcPrice's): on the coefficients' path it would be wasted per call.
 */
type Pricer = (tokens: CallTokens, at: string | undefined) => number | undefined;

const usageOf = (t: CallTokens): Usage => ({
  input_tokens: t.input,
  output_tokens: t.output,
  cache_read_tokens: t.cacheRead || undefined,
  cache_write_tokens: t.cacheWrite || undefined,
});

/** calcPrice, undefined where it throws: a usage the table refuses leaves the call unpriced (the event stays storable). */
function lookUp(usage: Usage, modelId: string, providerId: string | undefined, at?: Date): PriceCalculation | undefined {
  try {
    return calcPrice(usage, modelId, { providerId, timestamp: at }) ?? undefined;
  } catch {
    return undefined;
  }
}

/** The table's own price of a call. */
const tablePrice = (modelId: string, providerId: string | undefined, tokens: CallTokens, at?: Date): number | undefined =>
  lookUp(usageOf(tokens), modelId, providerId, at)?.total_price;

interface Coefficients { c: number; a: number; b: number; r: number; w: number }

const PER_MTOK = 1_000_000;
/** How close the coefficients' price must come to calcPrice's at the check point (relative). */
const TOLERANCE = 1e-9;

/** The input-tier thresholds of a price with no time constraints, ascending; undefined when prices vary with time. */
function tierStarts(model: ModelInfo): number[] | undefined {
  if (Array.isArray(model.prices)) return undefined;
  const starts = new Set<number>();
  for (const v of Object.values(model.prices)) {
    if (typeof v === "object" && v !== null) for (const t of v.tiers) starts.add(t.start);
  }
  return [...starts].sort((x, y) => x - y);
}

/**
 * The coefficients of the tier of inputs in (lo, hi], from calcPrice; undefined when they do not reproduce
 * calcPrice at a further point of the tier. A per-request price is taken to be the same in every tier (the check
 * catches one that is not).
 */
function coefficientsFor(modelId: string, providerId: string | undefined, lo: number, hi: number): Coefficients | undefined {
  const at = (input: number, output = 0, cacheRead = 0, cacheWrite = 0) => tablePrice(modelId, providerId, { input, output, cacheRead, cacheWrite });
  // An input inside the tier, as high as it allows (a finite tier's upper end is part of it).
  const x = Number.isFinite(hi) ? hi : lo + 10 * PER_MTOK;
  // The price of a call of no tokens (a per-request price, if any) is the constant: exact, not a difference.
  const c = at(0), p = at(x), pOut = at(x, PER_MTOK), pRead = at(x, 0, x), pWrite = at(x, 0, 0, x);
  if (c === undefined || p === undefined || pOut === undefined || pRead === undefined || pWrite === undefined) return undefined;
  const k: Coefficients = { c, a: (p - c) / x, b: (pOut - p) / PER_MTOK, r: (pRead - p) / x, w: (pWrite - p) / x };
  // The check: a point with every kind of token, inside the tier.
  const input = Math.floor(lo + (x - lo) * 0.37) + 1;
  const probe = { input, output: 7_919, cacheRead: Math.floor(input * 0.41), cacheWrite: Math.floor(input * 0.13) };
  const expected = tablePrice(modelId, providerId, probe);
  const got = linear(k, probe);
  if (expected === undefined || Math.abs(got - expected) > TOLERANCE * Math.max(Math.abs(expected), 1e-12)) return undefined;
  return k;
}

/** Never below zero: the differences the coefficients come from may leave a rounding error of either sign. */
const linear = (k: Coefficients, t: CallTokens) => Math.max(0, k.c + k.a * t.input + k.b * t.output + k.r * t.cacheRead + k.w * t.cacheWrite);

/** A resolved model's pricer: from coefficients per tier where the table allows it, else calcPrice every time. */
function pricerFor(modelId: string, providerId: string | undefined, model: ModelInfo): Pricer {
  const slow: Pricer = (t, at) => tablePrice(modelId, providerId, t, at === undefined ? undefined : new Date(at));
  const starts = tierStarts(model);
  if (starts === undefined) return slow;
  const bounds = [0, ...starts.filter((s) => s > 0), Infinity];
  // Tier i holds inputs in (bounds[i], bounds[i+1]]; an input of 0 is priced with the first tier's coefficients.
  const tiers: (Coefficients | null | undefined)[] = [];
  return (t, at) => {
    let i = 0;
    while (i + 2 < bounds.length && t.input > bounds[i + 1]!) i++;
    let k = tiers[i];
    if (k === undefined) k = tiers[i] = coefficientsFor(modelId, providerId, bounds[i]!, bounds[i + 1]!) ?? null;
    return k === null ? slow(t, at) : linear(k, t);
  };
}

/** A model name as the table knows it: the first of these that matches, in computeCost's order. */
function resolve(model: string, provider: string | undefined): Pricer | null {
  const attempts: [string, string | undefined][] = [];
  if (provider) attempts.push([model, provider]);
  attempts.push([model, undefined]);
  const qualified = /^([\w.-]+)[/:](.+)$/.exec(model);
  if (qualified) attempts.push([qualified[2]!, qualified[1]!], [qualified[2]!, undefined]);
  for (const [modelId, providerId] of attempts) {
    const found = lookUp({ input_tokens: 0, output_tokens: 0 }, modelId, providerId)?.model;
    if (found) return pricerFor(modelId, providerId, found);
  }
  return null;
}

/** Model names seen (with their provider) → how to price them; bounded, since model names come from clients. */
const resolved = new Map<string, Pricer | null>();
const MAX_RESOLVED = 10_000;

function pricerOf(model: string, provider: string | undefined): Pricer | null {
  const key = `${provider ?? ""}\u0000${model}`;
  let p = resolved.get(key);
  if (p === undefined) {
    p = resolve(model, provider);
    if (resolved.size >= MAX_RESOLVED) resolved.clear();
    resolved.set(key, p);
  }
  return p;
}

/**
 * USD price of a model call from the genai-prices table, or undefined when the model is unknown.
 * Accepts "gpt-4o" as well as provider-qualified names like "openai/gpt-4o" or "anthropic:claude-3-5-sonnet".
 */
export function computeCost(
  model: string,
  promptTokens: number,
  completionTokens: number,
  at?: string,
  more: { provider?: string; cachedTokens?: number; cacheWriteTokens?: number } = {},
): number | undefined {
  const cacheRead = more.cachedTokens || 0;
  const cacheWrite = more.cacheWriteTokens || 0;
  // genai-prices counts cache reads and writes as parts of input_tokens, priced at their own rates, and throws when
  // they add up to more than it. Such counts were reported apart from the prompt tokens (Anthropic's API does so:
  // input_tokens, cache_read_input_tokens and cache_creation_input_tokens do not overlap), so they are added to it.
  const input = cacheRead + cacheWrite > promptTokens ? promptTokens + cacheRead + cacheWrite : promptTokens;
  const pricer = pricerOf(model, more.provider);
  return pricer?.({ input, output: completionTokens, cacheRead, cacheWrite }, at || undefined);
}

/**
 * Google Gemini generateContent: POST {base}/v1beta/models/{model}:generateContent with x-goog-api-key.
 * Structured output through generationConfig.responseMimeType "application/json" + responseSchema (an
 * OpenAPI-subset schema: upper-case types, no additionalProperties; propertyOrdering keeps field order).
 */
import { Either } from "effect";
import { parseJsonText } from "../answer.js";
import { malformedAnswer } from "../errors.js";
import { PRICE_PROVIDER } from "../../core/agents/prices.js";
import { usageAndCost } from "../pricing.js";
import { postJson } from "./http.js";
import type { Provider, ProviderContext } from "./types.js";

interface GenerateContentResponse {
  modelVersion?: string;
  candidates?: Array<{ content?: { parts?: Array<{ text?: string; thought?: boolean }> }; finishReason?: string }>;
  promptFeedback?: { blockReason?: string };
}

/** JSON Schema (our subset) → Gemini Schema object. */
export function toGeminiSchema(s: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { type: String(s.type).toUpperCase() };
  if (s.description) out.description = s.description;
  if (s.enum) out.enum = s.enum;
  if (s.items) out.items = toGeminiSchema(s.items as Record<string, unknown>);
  if (s.properties) {
    const props = s.properties as Record<string, Record<string, unknown>>;
    out.properties = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, toGeminiSchema(v)]));
    out.propertyOrdering = Object.keys(props);
  }
  if (s.required) out.required = s.required;
  return out;
}

/** Schemas are translated once each (the improvement's, each evaluator's), not per call. */
const geminiSchemas = new WeakMap<object, Record<string, unknown>>();
function responseSchema(schema: Readonly<Record<string, unknown>>): Record<string, unknown> {
  let s = geminiSchemas.get(schema);
  if (!s) geminiSchemas.set(schema, (s = toGeminiSchema(schema as Record<string, unknown>)));
  return s;
}

/** POST {base}/v1beta/models/{model}:generateContent with the key, as the judge call and a plain chat both send it. */
const postGenerate = (ctx: ProviderContext, model: string, body: Record<string, unknown>, signal: AbortSignal | undefined) =>
  postJson({
    provider: "Gemini", url: `${ctx.settings.baseUrl}/v1beta/models/${encodeURIComponent(model)}:generateContent`,
    headers: { "x-goog-api-key": ctx.settings.apiKey ?? "" }, body, policy: ctx.policy, fetch: ctx.fetch, signal,
  });

type Candidate = NonNullable<GenerateContentResponse["candidates"]>[number];

/** The first candidate; a blocked prompt or none at all an error saying so. */
function firstCandidate(res: GenerateContentResponse): Candidate {
  if (res?.promptFeedback?.blockReason) throw malformedAnswer("Gemini", `the prompt was blocked (${res.promptFeedback.blockReason})`);
  const candidate = res?.candidates?.[0];
  if (!candidate) throw malformedAnswer("Gemini", "the response has no candidates");
  return candidate;
}

/** A candidate's answer text, its thought parts left out. */
const candidateText = (c: Candidate): string => (c.content?.parts ?? []).filter((p) => !p.thought && typeof p.text === "string").map((p) => p.text).join("");

export const gemini: Provider = {
  id: "gemini",
  name: "Google Gemini",
  models: ["gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.5-flash-lite", "gemini-2.0-flash"],
  maxTemperature: 2,
  priceProvider: PRICE_PROVIDER.gemini,
  async complete(ctx, req) {
    const { body, attempts } = await postGenerate(ctx, req.model, {
      systemInstruction: { parts: [{ text: req.system }] },
      contents: [{ role: "user", parts: [{ text: req.user }] }],
      generationConfig: {
        ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
        ...(req.maxTokens !== undefined ? { maxOutputTokens: req.maxTokens } : {}),
        responseMimeType: "application/json",
        responseSchema: responseSchema(req.output.schema),
      },
    }, req.signal);
    const res = body as GenerateContentResponse;
    const candidate = firstCandidate(res);
    if (candidate.finishReason === "MAX_TOKENS") throw malformedAnswer("Gemini", "the answer was cut off (finishReason: MAX_TOKENS)");
    const text = candidateText(candidate);
    if (!text) throw malformedAnswer("Gemini", `the candidate has no text (finishReason: ${candidate.finishReason ?? "none"})`);
    const value = parseJsonText(text);
    if (Either.isLeft(value)) throw malformedAnswer("Gemini", value.left, text);
    const model = res.modelVersion ?? req.model;
    return { value: value.right, rawText: text, model, usage: usageAndCost("google", "default", body, model), attempts };
  },
  async chat(ctx, req) {
    const system = req.messages.filter((m) => m.role === "system" || m.role === "developer").map((m) => ({ text: m.content }));
    const contents = req.messages.filter((m) => m.role === "user" || m.role === "assistant")
      .map((m) => ({ role: m.role === "assistant" ? "model" : "user", parts: [{ text: m.content }] }));
    const { body, attempts } = await postGenerate(ctx, req.model, {
      ...(system.length ? { systemInstruction: { parts: system } } : {}),
      contents,
      generationConfig: {
        ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
        ...(req.topP !== undefined ? { topP: req.topP } : {}),
        ...(req.maxTokens !== undefined ? { maxOutputTokens: req.maxTokens } : {}),
      },
    }, req.signal);
    const res = body as GenerateContentResponse;
    const text = candidateText(firstCandidate(res));
    const model = res.modelVersion ?? req.model;
    return { text, model, usage: usageAndCost("google", "default", body, model), attempts };
  },
};

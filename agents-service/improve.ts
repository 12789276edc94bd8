/**
 * POST /improve, once the request is authenticated and validated: detect the language, ask the chosen
 * provider for structured improvements, validate them, diff, price. Each stage is reported to the run
 * tracer (self-reporting to Runwatch, report.ts) when one is configured.
 */
import { createTwoFilesPatch } from "diff";
import { callerLanguage, detectLanguage } from "./language/detect.js";
import type { ImproveResponse } from "../core/agents/contract.js";
import { findLanguage } from "../core/agents/languages.js";
import { Either } from "effect";
import { ANSWER_OUTPUT, validateAnswer } from "./answer.js";
import { badRequest, malformedAnswer, ServiceError } from "./errors.js";
import { systemPrompt, userPrompt } from "./prompt.js";
import { PROVIDERS } from "./providers/index.js";
import type { ImproveRequest } from "./request.js";
import { isConfigured, resolveDefaultProvider, type AgentsSettings, type ProviderId } from "./settings.js";
import type { RunTrace } from "./report.js";

export type { ImproveResponse };

export interface ImproveDeps {
  readonly settings: AgentsSettings;
  readonly fetch: typeof fetch;
  readonly trace: RunTrace;
  readonly signal?: AbortSignal;
}

export function chooseProvider(settings: AgentsSettings, req: Pick<ImproveRequest, "provider" | "model" | "temperature">): { provider: ProviderId; model: string } {
  const provider = req.provider ?? resolveDefaultProvider(settings);
  if (!provider) {
    throw new ServiceError({
      status: 503,
      code: "no_provider_configured",
      message: "no LLM provider is configured: set OPENAI_API_KEY (or OPENAI_BASE_URL), ANTHROPIC_API_KEY or GEMINI_API_KEY",
    });
  }
  if (!isConfigured(provider, settings.providers[provider])) {
    throw badRequest("provider_not_configured", `provider ${provider} is not configured on this server (see GET /providers)`, "provider");
  }
  const max = PROVIDERS[provider].maxTemperature;
  if (req.temperature !== undefined && req.temperature > max) {
    throw new ServiceError({ status: 422, code: "validation_failed", message: `temperature: must be between 0 and ${max} for ${provider}`, field: "temperature" });
  }
  return { provider, model: req.model ?? settings.providers[provider].defaultModel };
}

/** File name for the diff headers, from the language ("snippet.py"). */
function diffName(language: string): string {
  const ext = findLanguage(language)?.aliases?.find((a) => /^[a-z0-9]{1,5}$/.test(a)) ?? (language === "plaintext" ? "txt" : language);
  return `snippet.${ext}`;
}

export function unifiedDiff(before: string, after: string, language: string): string {
  if (before === after) return "";
  const name = diffName(language);
  return createTwoFilesPatch(`a/${name}`, `b/${name}`, before, after, undefined, undefined, { context: 3 })
    .replace(/^=+\n/m, ""); // jsdiff's "Index/====" banner is not part of a unified diff
}

export async function improve(deps: ImproveDeps, req: ImproveRequest): Promise<ImproveResponse> {
  const started = performance.now();
  const { provider, model } = chooseProvider(deps.settings, req);
  const { trace } = deps;

  const detection = await trace.step("detect_language", async () => {
    const d = req.language ? callerLanguage(req.language) : await detectLanguage(req.code);
    return { result: d, output: { language: d.language, confidence: d.confidence, method: d.method } };
  });

  const impl = PROVIDERS[provider];
  const completion = await trace.step(`llm_${provider}`, async () => {
    const r = await impl.complete(
      {
        settings: deps.settings.providers[provider],
        policy: {
          timeoutMs: deps.settings.llmTimeoutMs,
          maxRetries: deps.settings.llmMaxRetries,
          baseDelayMs: deps.settings.llmRetryBaseMs,
          maxBackoffMs: deps.settings.llmMaxBackoffMs,
          maxRetryAfterMs: deps.settings.llmMaxRetryAfterMs,
        },
        fetch: deps.fetch,
        anthropicMaxTokens: deps.settings.anthropicMaxTokens,
      },
      {
        model,
        temperature: req.temperature,
        system: systemPrompt(),
        user: userPrompt({ code: req.code, language: detection.language, instructions: req.instructions }),
        output: ANSWER_OUTPUT,
        signal: deps.signal,
      },
    );
    const answer = validateAnswer(r.value);
    if (Either.isLeft(answer)) throw malformedAnswer(impl.name, answer.left, r.rawText);
    return {
      result: { ...r, answer: answer.right },
      output: { provider, model: r.model, attempts: r.attempts, suggestions: answer.right.suggestions.length, ...r.usage },
    };
  });

  let improved = completion.answer.improved_code;
  // Models often drop the final newline; keeping the input's avoids a spurious "\ No newline" hunk.
  if (req.code.endsWith("\n") && !improved.endsWith("\n") && improved.length > 0) improved += "\n";

  return {
    language: detection.language,
    confidence: detection.confidence,
    detection: { method: detection.method, candidates: detection.candidates },
    provider,
    model: completion.model,
    suggestions: completion.answer.suggestions,
    improved_code: improved,
    diff: unifiedDiff(req.code, improved, detection.language),
    usage: completion.usage,
    duration_ms: Math.round(performance.now() - started),
  };
}

/**
 * One playground run (docs/PROMPTS.md, Playground), for the API and the page alike: a prompt version — or a draft
 * of one, edited on the page or opened from an LLM span — with its variables filled (prompts/playground.ts), asked
 * of its provider through agents-service with the project's keys and under its judge caps
 * (evaluation's projectCompletion). What the provider answers or fails with is the run's; a failure is an
 * HttpProblem naming the field to change: 422 for what the request or its config got wrong (an unknown model, a
 * refused key, a timeout: the provider did not answer within agents-service's limit), 503 with Retry-After when
 * the provider or the service is only busy.
 */
import type { AgentsFailure } from "../../core/agents/client.js";
import { isAgentsFailure } from "../../core/agents/client.js";
import type { ChatMessage } from "../../core/agents/contract.js";
import { NotFound, ValidationError } from "../../core/errors.js";
import { projectCompletion, type CompleteCall } from "../../evaluation/index.js";
import { playgroundRequest, readPrompt } from "../../prompts/index.js";
import { checkPromptName, checkPromptVersion, type PromptConfigValue, type PromptContent } from "../../stores/prompt-input.js";
import type { VersionRef } from "../../stores/prompts.js";
import type { WebDeps } from "../deps.js";
import { HttpProblem } from "../http-errors.js";

/** What a side runs: a version of the prompt, or a draft (its prompt and config as a version's body holds them). */
export type PlaygroundSubject =
  | { readonly ref: VersionRef }
  | { readonly draft: { readonly prompt: unknown; readonly config?: unknown }; readonly from?: number };

export interface PlaygroundRun {
  /** The version run, null for a draft; `from`: the version a draft was edited from. */
  readonly version: number | null;
  readonly from: number | null;
  readonly messages: readonly ChatMessage[];
  readonly provider: string;
  readonly model: string;
  readonly answer: string;
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  /** null when the model has no known price (genai-prices). */
  readonly cost_usd: number | null;
  /** The provider call's time, retries included, as agents-service measured it. */
  readonly latency_ms: number;
  readonly attempts: number;
}

/** Where a failure's field points in a version's body. */
const FIELD_OF: Record<string, string> = {
  provider: "config.provider", model: "config.model", messages: "prompt", temperature: "config.parameters.temperature",
  top_p: "config.parameters.top_p", max_tokens: "config.parameters.max_tokens", api_key: "config.provider", "connection.base_url": "config.provider",
};
const BUSY = new Set(["busy", "provider_rate_limited", "provider_unavailable", "agents_unreachable", "no_provider_configured"]);
const KEY_PROBLEMS = new Set(["provider_auth_failed", "provider_unreachable", "provider_url_refused", "provider_not_configured", "provider_key_unreadable"]);

export function failureProblem(f: AgentsFailure): HttpProblem {
  if (BUSY.has(f.code)) {
    return new HttpProblem(503, f.code, `${f.message}; retry shortly`, undefined, { "Retry-After": String(f.retry_after_s ?? 5) });
  }
  const field = (f.field && FIELD_OF[f.field]) ?? (KEY_PROBLEMS.has(f.code) ? "config.provider" : "config.model");
  return new HttpProblem(422, f.code, f.message, field);
}

/** A version of the prompt by a body's `version` or `label`; one the prompt lacks is a 422 naming that field. */
export async function readVersionOf(deps: Pick<WebDeps, "ports">, projectId: number, name: string, ref: VersionRef) {
  try {
    return await readPrompt(deps.ports.sql, projectId, name, ref);
  } catch (err) {
    // The prompt is there but not this version or label: the body's field is what is wrong.
    if (err instanceof NotFound && (err.resource === "version" || err.resource === "label")) {
      throw new ValidationError({ field: err.resource, message: err.message });
    }
    throw err;
  }
}

async function subjectOf(deps: WebDeps, projectId: number, name: string, s: PlaygroundSubject): Promise<{ version: number | null; from: number | null; prompt: PromptContent; config: PromptConfigValue }> {
  if ("ref" in s) {
    const v = await readVersionOf(deps, projectId, name, s.ref);
    return { version: v.version, from: null, prompt: v.prompt, config: v.config };
  }
  // A draft may name a prompt that has no version yet (one opened from an LLM span): its name is still checked.
  checkPromptName(name);
  const checked = checkPromptVersion({ prompt: s.draft.prompt, ...(s.draft.config !== undefined ? { config: s.draft.config } : {}) });
  return { version: null, from: s.from ?? null, prompt: checked.content, config: checked.config };
}

export async function runPlayground(
  deps: WebDeps, projectId: number, name: string, subject: PlaygroundSubject, variables: Readonly<Record<string, unknown>>,
  complete: CompleteCall = projectCompletion(deps, projectId),
): Promise<PlaygroundRun> {
  const s = await subjectOf(deps, projectId, name, subject);
  const req = playgroundRequest(s.prompt, s.config, variables);
  const r = await complete(req);
  if (isAgentsFailure(r)) throw failureProblem(r);
  return {
    version: s.version, from: s.from, messages: req.messages, provider: r.provider, model: r.model, answer: r.text,
    prompt_tokens: r.usage.prompt_tokens, completion_tokens: r.usage.completion_tokens, cost_usd: r.usage.cost_usd,
    latency_ms: r.duration_ms, attempts: r.attempts,
  };
}

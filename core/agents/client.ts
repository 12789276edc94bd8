/**
 * Calling agents-service over HTTP (config.agentsUrl, X-Agent-Secret): the dashboard's /improve and the
 * evaluators' POST /judge. Every failure — unreachable, timed out, an error status — becomes an AgentsFailure with
 * the service's error code, never a throw. The prompts playground's POST /complete goes the same way.
 */
import type { Config } from "../config.js";
import { RETRYABLE_AGENT_ERRORS, type CompleteRequest, type CompleteResponse, type JudgeRequest, type JudgeResponse } from "./contract.js";

export interface AgentsFailure {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  readonly field?: string;
  /** What the model answered, when the answer was not JSON (malformed_model_answer). */
  readonly raw_answer?: string;
  /** Seconds the service asked to wait (429/503). */
  readonly retry_after_s?: number;
}

export async function callAgents<T>(config: Pick<Config, "agentsUrl">, path: string, init: RequestInit & { timeoutMs: number }): Promise<T | AgentsFailure> {
  try {
    const res = await fetch(`${config.agentsUrl.replace(/\/+$/, "")}${path}`, { ...init, signal: init.signal ? AbortSignal.any([init.signal, AbortSignal.timeout(init.timeoutMs)]) : AbortSignal.timeout(init.timeoutMs) });
    const body = (await res.json().catch(() => undefined)) as { error?: Omit<AgentsFailure, "status"> } | undefined;
    if (res.ok && body) return body as T;
    const retryAfter = Number(res.headers.get("retry-after"));
    return {
      status: res.status,
      code: body?.error?.code ?? "agents_error",
      message: body?.error?.message ?? `the agents service answered HTTP ${res.status}`,
      ...(body?.error?.field ? { field: body.error.field } : {}),
      ...(typeof body?.error?.raw_answer === "string" ? { raw_answer: body.error.raw_answer } : {}),
      ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retry_after_s: retryAfter } : {}),
    };
  } catch (err) {
    const timedOut = (err as Error).name === "TimeoutError";
    return {
      status: timedOut ? 504 : 503,
      code: timedOut ? "agents_timeout" : "agents_unreachable",
      message: timedOut ? "the agents service did not answer in time" : `the agents service at ${config.agentsUrl} is not reachable; is it running?`,
    };
  }
}

export const isAgentsFailure = (v: unknown): v is AgentsFailure => typeof v === "object" && v !== null && "code" in v && "status" in v && "message" in v;

/** Worth trying again later: the service or its provider was not available (not a bad answer or a bad request). */
export const isRetryable = (f: AgentsFailure): boolean => RETRYABLE_AGENT_ERRORS.has(f.code) || f.code === "agents_unreachable" || f.code === "agents_timeout";

/** A judge's answer: one POST /judge. */
export function callJudge(config: Pick<Config, "agentsUrl">, secret: string, req: JudgeRequest, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<JudgeResponse | AgentsFailure> {
  return callAgents<JudgeResponse>(config, "/judge", {
    method: "POST",
    headers: { "content-type": "application/json", "x-agent-secret": secret },
    body: JSON.stringify(req),
    timeoutMs: opts.timeoutMs ?? 120_000,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
}

/** A chat completion's answer: one POST /complete (the prompts playground). */
export function callComplete(config: Pick<Config, "agentsUrl">, secret: string, req: CompleteRequest, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<CompleteResponse | AgentsFailure> {
  return callAgents<CompleteResponse>(config, "/complete", {
    method: "POST",
    headers: { "content-type": "application/json", "x-agent-secret": secret },
    body: JSON.stringify(req),
    timeoutMs: opts.timeoutMs ?? 120_000,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
}

/** The shapes a Run (run.ts) takes and reports: event types, usage, span ids, human input, and what it needs from its client. */
import type { WireAttributes } from "./attributes.js";
import type { RunwatchError } from "./errors.js";
import type { ScoreOptions, ScoreValue } from "./scores.js";

export type EventType =
  | "run_start"
  | "run_end"
  | "error"
  | "step"
  | "tool_call"
  | "human_input_requested"
  | "human_input_received";

export type RunState = "running" | "waiting_for_input" | "success" | "error";

/** Token usage and cost of a run, reported in run_end. */
export interface Usage {
  promptTokens?: number;
  completionTokens?: number;
  /** Defaults to promptTokens + completionTokens. */
  totalTokens?: number;
  model?: string;
  /** Leave out to let the server price the tokens from its price table. */
  costUsd?: number;
}

export interface HumanInputOptions {
  /** Extra information shown next to the question on the dashboard. */
  context?: Record<string, unknown>;
  /** Where the question should be surfaced, e.g. "dashboard", "slack", "email". Default "dashboard". */
  channel?: string;
  /** Give up (rejecting with a RunwatchError code "human_input") after this long. Default: wait indefinitely. */
  timeoutMs?: number;
  /** Abort the wait. */
  signal?: AbortSignal;
}

export interface HumanInputAnswer {
  response: string;
  respondedBy?: string;
  answeredAt?: string;
}

/** The span an event belongs to and the span it nests in (docs/API.md, Spans). */
export interface SpanIds {
  spanId?: string;
  parentSpanId?: string;
}

/** What an LLM call reports (tokens as the provider counts them: cached is part of prompt, reasoning of completion). */
export interface LlmUsage {
  model?: string;
  provider?: string;
  promptTokens?: number;
  completionTokens?: number;
  totalTokens?: number;
  cachedTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
  /** Leave out to let the server price the call from its model and provider. */
  costUsd?: number;
  /** The prompt version the call used: a Prompt from getPrompt (a fallback, whose version is null, is not recorded). */
  prompt?: { readonly name: string; readonly version: number | null };
}

/** What a Run needs from its client (kept as an interface so the two modules do not import each other). */
export interface RunHost {
  emit(sdkRunId: string, agentName: string, type: EventType, payload: Record<string, unknown>, configVersion?: number, ids?: SpanIds, sessionId?: string, attributes?: WireAttributes): void;
  /** Hands a problem that does not stop the run (a tag left out, say) to onError. */
  report(err: RunwatchError): void;
  flush(timeoutMs?: number): Promise<boolean>;
  waitForHumanInput(sdkRunId: string, options?: Pick<HumanInputOptions, "timeoutMs" | "signal">): Promise<HumanInputAnswer>;
  score(sdkRunId: string, name: string, value: ScoreValue, options?: ScoreOptions): Promise<string>;
}

export interface StepEndOptions extends SpanIds {
  durationMs?: number;
  output?: unknown;
  error?: unknown;
  /** Extra payload fields (kept by the server). */
  extra?: Record<string, unknown>;
}

export interface ToolEndOptions extends SpanIds {
  durationMs?: number;
  output?: unknown;
  error?: unknown;
  input?: unknown;
  extra?: Record<string, unknown>;
}

/** A handle inside run.llmCall(): report the call's usage and output. */
export interface LlmCallHandle {
  readonly spanId: string;
  setUsage(u: LlmUsage): void;
  setOutput(output: unknown): void;
}

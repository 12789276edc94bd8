/**
 * runwatch: report AI agent runs to a Runwatch server. Zero runtime dependencies; runs on Node ≥ 18, Deno,
 * Bun and edge runtimes (fetch + timers only). LangChain.js / LangGraph.js: see "runwatch/langchain".
 */
export { Runwatch, getDefaultClient, DEFAULT_BASE_URL, type RunwatchOptions, type RunOptions, type EndRunOptions } from "./client.js";
export {
  Run,
  type EventType,
  type RunState,
  type Usage,
  type HumanInputOptions,
  type HumanInputAnswer,
  type StepEndOptions,
  type ToolEndOptions,
  type SpanIds,
  type LlmUsage,
  type LlmCallHandle,
} from "./run.js";
export { currentRun } from "./current-run.js";
export type { MetadataValue, RunAttributeOptions } from "./attributes.js";
export { RunwatchError, type RunwatchErrorCode, type TransportOptions, type TransportStats } from "./transport.js";
export { uuidv7 } from "./ids.js";
export type { ScoreOptions, ScoreSource, ScoreValue } from "./scores.js";
export type { Dataset, DatasetItem, DatasetItemInput } from "./datasets.js";
export { Prompt, PromptVariableError, promptVariables, type GetPromptOptions, type PromptConfig, type PromptContent, type PromptMessage } from "./prompts.js";
export type { EvaluatorRun, EvaluatorTarget, ServerEvaluator } from "./evaluators.js";
export type { Activation, GateCheck } from "./gate.js";
export type { Evaluator, EvaluatorArgs, EvaluatorResult, ExperimentItemResult, ExperimentOptions, ExperimentSummary, ExperimentTaskContext } from "./experiments.js";
export { preview, PREVIEW_MAX_CHARS } from "./json.js";

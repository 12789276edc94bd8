/**
 * Which span attributes mean what, per convention (docs/OTEL.md has these tables for users): OpenTelemetry GenAI
 * semantic conventions (current names first, then older names still emitted), OpenInference (Arize: LangChain,
 * LlamaIndex, … instrumentations), Traceloop/OpenLLMetry and the Vercel AI SDK's `ai.*` attributes. Each list is read first to last; the first attribute
 * present wins.
 */

/** A Runwatch span kind (core/events/schema.ts SPAN_KINDS), or "tool" (sent as a tool_call). */
export type MappedKind = "step" | "llm" | "retrieval" | "embedding" | "agent" | "chain" | "plan" | "tool" | "reranker" | "guardrail";

/** `gen_ai.operation.name` → kind. */
export const GEN_AI_OPERATION_KINDS: Readonly<Record<string, MappedKind>> = {
  chat: "llm",
  text_completion: "llm",
  generate_content: "llm",
  embeddings: "embedding",
  execute_tool: "tool",
  invoke_agent: "agent",
  create_agent: "agent",
  invoke_workflow: "chain",
  plan: "plan",
  retrieval: "retrieval",
};

/** `openinference.span.kind` → kind. */
export const OPENINFERENCE_KINDS: Readonly<Record<string, MappedKind>> = {
  LLM: "llm",
  TOOL: "tool",
  CHAIN: "chain",
  AGENT: "agent",
  RETRIEVER: "retrieval",
  EMBEDDING: "embedding",
  RERANKER: "reranker",
  GUARDRAIL: "guardrail",
};

/** `traceloop.span.kind` → kind. */
export const TRACELOOP_KINDS: Readonly<Record<string, MappedKind>> = {
  workflow: "chain",
  task: "step",
  agent: "agent",
  tool: "tool",
};

/**
 * The Vercel AI SDK's `ai.operationId` → kind: a generateText/streamText call is an agent turn (a loop of model calls
 * and tool calls, named by its telemetry functionId), its do* spans are the model calls.
 */
export const VERCEL_AI_KINDS: Readonly<Record<string, MappedKind>> = {
  "ai.generateText": "agent",
  "ai.streamText": "agent",
  "ai.generateObject": "agent",
  "ai.streamObject": "agent",
  "ai.generateText.doGenerate": "llm",
  "ai.streamText.doStream": "llm",
  "ai.generateObject.doGenerate": "llm",
  "ai.streamObject.doStream": "llm",
  "ai.toolCall": "tool",
  "ai.embed": "chain",
  "ai.embedMany": "chain",
  "ai.embed.doEmbed": "embedding",
  "ai.embedMany.doEmbed": "embedding",
  "ai.rerank": "chain",
  "ai.rerank.doRerank": "reranker",
};

/** The attributes that name a span's kind, in order, with their tables. */
export const KIND_ATTRIBUTES: readonly (readonly [string, Readonly<Record<string, MappedKind>>])[] = [
  ["gen_ai.operation.name", GEN_AI_OPERATION_KINDS],
  ["openinference.span.kind", OPENINFERENCE_KINDS],
  ["traceloop.span.kind", TRACELOOP_KINDS],
  ["ai.operationId", VERCEL_AI_KINDS],
];

/** LLM call fields (core/events/schema.ts, step payload) ← attributes. */
export const LLM_ATTRIBUTES = {
  model: ["gen_ai.response.model", "gen_ai.request.model", "llm.model_name", "ai.response.model", "ai.model.id"],
  provider: ["gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system", "ai.model.provider"],
  // Input counts include the cached part in every convention here (OpenAI's prompt_tokens, the AI SDK's inputTokens).
  prompt_tokens: ["gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt", "ai.usage.inputTokens", "ai.usage.promptTokens"],
  completion_tokens: [
    "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion", "ai.usage.outputTokens", "ai.usage.completionTokens",
  ],
  total_tokens: ["gen_ai.usage.total_tokens", "llm.token_count.total", "ai.usage.totalTokens"],
  cached_tokens: [
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_read_input_tokens",
    "llm.token_count.prompt_details.cache_read",
    "ai.usage.inputTokenDetails.cacheReadTokens",
    "ai.usage.cachedInputTokens",
  ],
  cache_write_tokens: [
    "gen_ai.usage.cache_write.input_tokens",
    "gen_ai.usage.cache_creation.input_tokens",
    "gen_ai.usage.cache_creation_input_tokens",
    "llm.token_count.prompt_details.cache_write",
    "ai.usage.inputTokenDetails.cacheWriteTokens",
  ],
  reasoning_tokens: [
    "gen_ai.usage.reasoning.output_tokens", "llm.token_count.completion_details.reasoning", "ai.usage.outputTokenDetails.reasoningTokens", "ai.usage.reasoningTokens",
  ],
  cost_usd: ["gen_ai.usage.cost", "llm.cost.total"],
  // The prompt version the call used (docs/PROMPTS.md): Runwatch's own attributes, and Langfuse's.
  prompt_name: ["runwatch.prompt.name", "langfuse.observation.prompt.name"],
  prompt_version: ["runwatch.prompt.version", "langfuse.observation.prompt.version"],
} as const satisfies Record<string, readonly string[]>;

/** A span's input and output content (opt-in in most instrumentations). */
export const CONTENT_ATTRIBUTES = {
  system: ["gen_ai.system_instructions"],
  input: ["gen_ai.input.messages", "gen_ai.prompt", "ai.prompt.messages", "ai.prompt"],
  output: ["gen_ai.output.messages", "gen_ai.completion", "ai.response.text", "ai.response.object", "ai.response.toolCalls"],
  /** Any span's input and output, when none of the above is there. */
  inputValue: ["input.value", "traceloop.entity.input", "pydantic_ai.all_messages"],
  outputValue: ["output.value", "traceloop.entity.output", "final_result"],
  /**
   * For LLM calls, messages flattened one attribute per field (read before input.value / output.value, which
   * OpenInference fills with the framework's serialised call): gen_ai.prompt.0.role, gen_ai.prompt.0.content, … and
   * OpenInference's llm.input_messages.0.message.role, …
   */
  indexedInput: ["gen_ai.prompt", "llm.input_messages"],
  indexedOutput: ["gen_ai.completion", "llm.output_messages"],
} as const;

/**
 * Content sent as span events (the GenAI events convention, which Strands Agents and older instrumentations use):
 * one event per message, the role in the event's name, and `gen_ai.choice` events for the answer. Read when no
 * content attribute is there. A tool span's arguments are its tool message, its result its choice.
 */
export const MESSAGE_EVENTS: Readonly<Record<string, string>> = {
  "gen_ai.system.message": "system",
  "gen_ai.user.message": "user",
  "gen_ai.assistant.message": "assistant",
  "gen_ai.tool.message": "tool",
};
export const CHOICE_EVENT = "gen_ai.choice";
/** The attributes of those events that hold the content. */
export const EVENT_CONTENT = { message: ["content"], choice: ["message"] } as const;

export const TOOL_ATTRIBUTES = {
  name: ["gen_ai.tool.name", "tool.name", "ai.toolCall.name"],
  arguments: ["gen_ai.tool.call.arguments", "input.value", "tool.parameters", "traceloop.entity.input", "ai.toolCall.args", "ai.toolCall.input"],
  result: ["gen_ai.tool.call.result", "output.value", "traceloop.entity.output", "ai.toolCall.result", "ai.toolCall.output"],
} as const;

export const FINISH_REASONS = ["gen_ai.response.finish_reasons", "llm.finish_reason", "ai.response.finishReason"] as const;
/** Seconds to the first streamed chunk. */
export const TIME_TO_FIRST_CHUNK = "gen_ai.response.time_to_first_chunk";
/** Milliseconds to the first streamed chunk (the Vercel AI SDK). */
export const MS_TO_FIRST_CHUNK = "ai.response.msToFirstChunk";
/** The agent a span (and so its run) belongs to; the AI SDK names it by the call's telemetry functionId. */
export const AGENT_NAME = ["gen_ai.agent.name", "agent.name", "ai.telemetry.functionId"] as const;
/** What names an agent span when no AGENT_NAME attribute does (OpenInference's OpenAI Agents JS instrumentation). */
export const AGENT_NODE_ID = ["graph.node.id"] as const;
/**
 * Instrumentations that name an agent only in its agent span's name (scope → a pattern whose first group is the
 * name): smolagents' OpenInference spans are `<agent name>.run`, with no agent.name attribute.
 */
export const AGENT_SPAN_NAMES: Readonly<Record<string, RegExp>> = {
  "openinference.instrumentation.smolagents": /^(.+)\.run$/,
};
/** The name a span shows in the trace, when better than the span name. */
export const ENTITY_NAME = ["traceloop.entity.name"] as const;
export const SERVICE_NAME = "service.name";
/** The session (conversation, thread) a trace belongs to → the run's session_id (docs/API.md, Sessions). */
export const SESSION_ID = ["gen_ai.conversation.id", "session.id", "langfuse.session.id"] as const;
/** An evaluator's judgement of the span it is recorded on (GenAI conventions) → a score of the run (docs/OTEL.md). */
export const EVALUATION_EVENT = "gen_ai.evaluation.result";
export const EVALUATION_ATTRIBUTES = {
  name: ["gen_ai.evaluation.name"],
  value: ["gen_ai.evaluation.score.value"],
  label: ["gen_ai.evaluation.score.label"],
  explanation: ["gen_ai.evaluation.explanation"],
} as const;
/** A span whose status is ERROR describes its exception in an event of this name (OTel exception conventions). */
export const EXCEPTION_EVENT = "exception";
export const EXCEPTION_ATTRIBUTES = {
  type: ["exception.type", "error.type"],
  message: ["exception.message"],
  stacktrace: ["exception.stacktrace"],
} as const;

/**
 * What a run is labelled with (core/events/attributes.ts): each span's attributes (and its resource's) give the
 * envelope fields of the span's events, which the run folds (tags: union; metadata: latest per key; the rest: latest).
 */
export const RUN_ATTRIBUTES = {
  /** A list of strings, or JSON text of one (OpenInference, Langfuse). */
  tags: ["tag.tags", "langfuse.trace.tags"],
  /** A JSON object (as text, or a kvlist) of metadata (OpenInference; Langfuse's whole-object form). */
  metadata: ["metadata", "langfuse.trace.metadata"],
  /** One attribute per metadata key: `<prefix><key>` (the Vercel AI SDK, Langfuse). */
  metadataPrefixes: ["ai.telemetry.metadata.", "langfuse.trace.metadata."],
  endUser: ["langfuse.user.id", "user.id"],
  environment: ["langfuse.environment"],
  release: ["langfuse.release"],
} as const;
/** The resource's attributes that say where the service runs and which build it is (OTel semantic conventions). */
export const RESOURCE_ENVIRONMENT = ["deployment.environment.name", "deployment.environment"] as const;
export const RESOURCE_RELEASE = ["service.version"] as const;

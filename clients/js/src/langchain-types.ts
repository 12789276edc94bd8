/** The public shape of runwatch/langchain's handler (langchain.ts): its options and its methods. */
import type { Runwatch } from "./client.js";

export interface CallbackHandlerOptions {
  /** Default: a process-wide client from RUNWATCH_API_KEY / RUNWATCH_BASE_URL. */
  client?: Runwatch;
  /** Default: the root runnable's name (e.g. the graph's name, "LangGraph"). */
  agentName?: string;
  /** Default "langgraph" for LangGraph graphs, else "langchain". */
  framework?: string;
  /**
   * The run id reported to Runwatch. Default: LangChain's root run id (one run per invocation; the thread is the
   * session), or with `runIdFromThread` the invocation's `configurable.thread_id`.
   */
  sdkRunId?: string | ((ctx: { threadId?: string; rootRunId: string }) => string);
  /**
   * true: the thread id is the run id, so every invocation of a thread (each chat turn) adds to one run — the
   * behaviour before sessions. Default false: one run per invocation, grouped by the thread as a session.
   */
  runIdFromThread?: boolean;
  /** The agent config version (agent registry) the runs use. */
  configVersion?: number;
  /** responded_by for resumes whose answer did not come through waitForAnswer(). */
  respondedBy?: string;
  /** Include node outputs in step end events. Default true. */
  captureStepOutputs?: boolean;
}

/** The handler: pass it in `callbacks: [handler]`. Extra helpers are ordinary properties. */
export interface RunwatchCallbackHandler {
  awaitHandlers: boolean;
  /**
   * Argument order as @langchain/core's CallbackManager really calls it (parentRunId 4th, runType 7th); its
   * published .d.ts lists runType 4th and parentRunId 8th.
   */
  handleChainStart(chain: unknown, inputs: unknown, runId: string, parentRunId?: string, tags?: string[], metadata?: Record<string, unknown>, runType?: string, runName?: string): void | Promise<void>;
  handleChainEnd(outputs: unknown, runId: string, parentRunId?: string): void;
  handleChainError(err: unknown, runId: string, parentRunId?: string): void;
  handleToolStart(tool: unknown, input: string, runId: string, parentRunId?: string, tags?: string[], metadata?: Record<string, unknown>, runName?: string, toolCallId?: string): void;
  handleToolEnd(output: unknown, runId: string, parentRunId?: string): void;
  handleToolError(err: unknown, runId: string, parentRunId?: string): void;
  handleChatModelStart(llm: unknown, messages: unknown, runId: string, parentRunId?: string, extraParams?: Record<string, unknown>, tags?: string[], metadata?: Record<string, unknown>, runName?: string): void;
  handleLLMStart(llm: unknown, prompts: string[], runId: string, parentRunId?: string, extraParams?: Record<string, unknown>, tags?: string[], metadata?: Record<string, unknown>, runName?: string): void;
  handleLLMEnd(output: unknown, runId: string, parentRunId?: string): void;
  handleLLMError(err: unknown, runId: string, parentRunId?: string): void;
  /**
   * Waits for the answer to a LangGraph interrupt given on the Runwatch dashboard (long-polling the input
   * endpoint). Resume the graph with it: `graph.invoke(new Command({ resume: answer.response }), config)`;
   * the resume then reports who answered.
   */
  waitForAnswer(threadId: string, options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<{ response: string; respondedBy?: string; answeredAt?: string }>;
  /**
   * The Runwatch run a thread's paused invocation reports to, as far as this handler knows without asking the server
   * (the thread id itself with `runIdFromThread`); undefined when it does not know.
   */
  sdkRunIdFor(threadId: string): string | undefined;
  /** The run a resume of this thread would continue: this handler's paused run, else the one the server says waits for input. */
  findWaitingRun(threadId: string): Promise<string | undefined>;
}

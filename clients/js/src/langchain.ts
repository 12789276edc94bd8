/**
 * runwatch/langchain: a LangChain.js / LangGraph.js callback handler.
 *
 * It is a plain object of handler methods (LangChain wraps such objects with BaseCallbackHandler.fromMethods),
 * so @langchain/core is never imported and stays out of `dependencies`. The methods keep their state in a
 * closure because LangChain copies them onto its own wrapper object.
 *
 * Mapping:
 *   root chain (no parent)             → run_start … run_end (tokens and model summed over all model calls) | error
 *   chain with metadata.langgraph_node → step start/end with duration and output
 *   tool                               → tool_call start/end with input/output previews and duration
 *   GraphInterrupt from interrupt()    → human_input_requested (run waits; not an error, no run_end)
 *   invoke(new Command({resume}))      → human_input_received on the same sdk_run_id (derived from thread_id)
 * Concurrent invocations are told apart by their root run id.
 */
import { getDefaultClient, type Runwatch } from "./client.js";
import { preview, safeStringify } from "./json.js";
import { Run } from "./run.js";

export interface CallbackHandlerOptions {
  /** Default: a process-wide client from RUNWATCH_API_KEY / RUNWATCH_BASE_URL. */
  client?: Runwatch;
  /** Default: the root runnable's name (e.g. the graph's name, "LangGraph"). */
  agentName?: string;
  /** Default "langgraph" for LangGraph graphs, else "langchain". */
  framework?: string;
  /**
   * The run id reported to Runwatch. Default: the invocation's `configurable.thread_id` (so a resume after
   * an interrupt continues the same run, even from another process), else LangChain's root run id.
   */
  sdkRunId?: string | ((ctx: { threadId?: string; rootRunId: string }) => string);
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
  handleChainStart(chain: unknown, inputs: unknown, runId: string, parentRunId?: string, tags?: string[], metadata?: Record<string, unknown>, runType?: string, runName?: string): void;
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
  /** The Runwatch run id used for a thread (what the dashboard shows as the run's external id). */
  sdkRunIdFor(threadId: string): string;
}

interface RootState {
  readonly run: Run;
  readonly threadId: string | undefined;
  readonly children: Set<string>;
  readonly reportedInterrupts: Set<string>;
  waiting: boolean;
}

interface Timed {
  readonly root: string;
  readonly name: string;
  readonly t0: number;
  readonly input?: unknown;
}

const MAX_WAITING_THREADS = 10_000;
const now = (): number => (typeof performance !== "undefined" && typeof performance.now === "function" ? performance.now() : Date.now());
const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object";
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** LangGraph control-flow exceptions: they travel through callbacks as chain errors but are not failures. */
const INTERRUPT_ERRORS = new Set(["GraphInterrupt", "NodeInterrupt"]);
const CONTROL_FLOW_ERRORS = new Set(["GraphBubbleUp", "ParentCommand", ...INTERRUPT_ERRORS]);
const errName = (err: unknown): string => (isObj(err) ? String((err as { name?: unknown }).name ?? (err as object).constructor?.name ?? "") : "");
const isInterrupt = (err: unknown): boolean => INTERRUPT_ERRORS.has(errName(err)) || (isObj(err) && Array.isArray(err.interrupts));

/** new Command({ resume }) as it reaches handleChainStart. */
function resumeValue(inputs: unknown): { resume: unknown } | undefined {
  if (!isObj(inputs) || !("resume" in inputs)) return undefined;
  const isCommand = inputs.lg_name === "Command" || (inputs as object).constructor?.name === "Command";
  return isCommand && inputs.resume !== undefined ? { resume: inputs.resume } : undefined;
}

/** Messages become {type, content, tool_calls}; everything else is kept as plain JSON, depth-limited. */
function simplify(value: unknown, depth = 0): unknown {
  if (!isObj(value)) return value;
  if (depth > 6) return preview(value, 200);
  const v = value as Record<string, unknown> & { getType?: () => string; _getType?: () => string };
  if (typeof v.getType === "function" || typeof v._getType === "function") {
    let type = "message";
    try {
      type = (v.getType ?? v._getType)!.call(v);
    } catch {
      /* keep default */
    }
    const out: Record<string, unknown> = { type, content: simplify(v.content, depth + 1) };
    if (Array.isArray(v.tool_calls) && v.tool_calls.length > 0) out.tool_calls = simplify(v.tool_calls, depth + 1);
    if (str(v.name)) out.name = v.name;
    return out;
  }
  if (v.lg_name === "Command") return { command: true, resume: simplify(v.resume, depth + 1), goto: simplify(v.goto, depth + 1) };
  if (Array.isArray(value)) return value.map((x) => simplify(x, depth + 1));
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null && typeof v.toJSON === "function") {
    return value;
  }
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(value)) out[k] = simplify(x, depth + 1);
  return out;
}

/** The question and context of one interrupt() value. */
function describeInterrupt(value: unknown): { question: string; context: Record<string, unknown>; channel?: string } {
  if (typeof value === "string") return { question: value, context: {} };
  if (isObj(value) && !Array.isArray(value)) {
    const question = str(value.question) ?? str(value.message) ?? str(value.prompt) ?? str(value.text);
    const { question: _q, channel, ...rest } = value;
    if (question !== undefined) return { question, context: simplify(rest) as Record<string, unknown>, channel: str(channel) };
    return { question: preview(value), context: simplify(value) as Record<string, unknown>, channel: str(channel) };
  }
  return { question: preview(value), context: {} };
}

export function createCallbackHandler(options: CallbackHandlerOptions = {}): RunwatchCallbackHandler {
  const client = (): Runwatch => options.client ?? getDefaultClient();
  const captureOutputs = options.captureStepOutputs ?? true;

  const roots = new Map<string, RootState>();
  const rootOf = new Map<string, string>();
  const nodes = new Map<string, Timed>();
  const tools = new Map<string, Timed>();
  const llmModels = new Map<string, string | undefined>();
  /** Runs paused by an interrupt, by thread: a resume in this process continues them (usage carried over). */
  const waitingByThread = new Map<string, Run>();
  const answeredBy = new Map<string, string | undefined>();

  /** Bounded: threads that are never resumed must not grow memory forever (oldest forgotten first). */
  const rememberWaiting = (threadId: string, run: Run): void => {
    waitingByThread.delete(threadId);
    waitingByThread.set(threadId, run);
    if (waitingByThread.size > MAX_WAITING_THREADS) waitingByThread.delete(waitingByThread.keys().next().value!);
  };

  const sdkRunIdFor = (threadId: string | undefined, rootRunId: string): string => {
    if (typeof options.sdkRunId === "function") return options.sdkRunId({ threadId, rootRunId });
    return options.sdkRunId ?? threadId ?? rootRunId;
  };

  /** Registers a child run under its root; undefined when the parent is unknown (not ours). */
  const attach = (runId: string, parentRunId: string | undefined): RootState | undefined => {
    const root = parentRunId ? rootOf.get(parentRunId) : undefined;
    if (root === undefined) return undefined;
    const state = roots.get(root);
    if (!state) return undefined;
    rootOf.set(runId, root);
    state.children.add(runId);
    return state;
  };

  const rootFor = (runId: string): RootState | undefined => {
    const r = rootOf.get(runId);
    return r === undefined ? undefined : roots.get(r);
  };

  const finishRoot = (rootId: string): void => {
    const state = roots.get(rootId);
    if (!state) return;
    for (const child of state.children) {
      rootOf.delete(child);
      nodes.delete(child);
      tools.delete(child);
      llmModels.delete(child);
    }
    rootOf.delete(rootId);
    roots.delete(rootId);
  };

  const reportInterrupts = (state: RootState, interrupts: unknown): void => {
    const list = Array.isArray(interrupts) ? interrupts : [interrupts];
    for (const it of list) {
      const id = isObj(it) ? str(it.id) ?? str(it.interrupt_id) : undefined;
      const key = id ?? safeStringify(it) ?? "";
      if (state.reportedInterrupts.has(key)) continue;
      state.reportedInterrupts.add(key);
      const d = describeInterrupt(isObj(it) && "value" in it ? it.value : it);
      state.run.humanInputRequested(d.question, { context: id ? { ...d.context, interrupt_id: id } : d.context, channel: d.channel });
    }
    state.waiting = true;
  };

  const guard =
    <A extends unknown[]>(fn: (...args: A) => void) =>
    (...args: A): void => {
      try {
        fn(...args);
      } catch {
        // Observability must never break the graph.
      }
    };

  const onStartRoot = (inputs: unknown, runId: string, metadata: Record<string, unknown> | undefined, runName: string | undefined): void => {
    const threadId = str(metadata?.thread_id) ?? (typeof metadata?.thread_id === "number" ? String(metadata.thread_id) : undefined);
    const resume = resumeValue(inputs);
    const sdkRunId = sdkRunIdFor(threadId, runId);
    let run: Run;
    if (resume) {
      const paused = threadId !== undefined ? waitingByThread.get(threadId) : undefined;
      if (threadId !== undefined) waitingByThread.delete(threadId);
      run = paused && paused.sdkRunId === sdkRunId ? paused : new Run(client(), sdkRunId, options.agentName ?? runName ?? "langgraph", options.configVersion);
      const by = threadId !== undefined && answeredBy.has(threadId) ? answeredBy.get(threadId) : options.respondedBy;
      if (threadId !== undefined) answeredBy.delete(threadId);
      run.humanInputReceived(resume.resume, by);
    } else {
      if (threadId !== undefined) waitingByThread.delete(threadId);
      run = client().startRun({
        agentName: options.agentName ?? runName ?? "langchain",
        input: simplify(inputs),
        sdkRunId,
        framework: options.framework ?? (metadata?.ls_integration === "langgraph" ? "langgraph" : "langchain"),
        configVersion: options.configVersion,
      });
    }
    roots.set(runId, { run, threadId, children: new Set(), reportedInterrupts: new Set(), waiting: false });
    rootOf.set(runId, runId);
  };

  const handler: RunwatchCallbackHandler = {
    // LangChain awaits these (cheap, synchronous) methods, so every event is queued before invoke() returns.
    awaitHandlers: true,

    handleChainStart: guard((_chain, inputs, runId, parentRunId, tags, metadata, _runType, runName) => {
      if (!parentRunId || !rootOf.has(parentRunId)) {
        onStartRoot(inputs, runId, metadata, runName);
        return;
      }
      const state = attach(runId, parentRunId);
      if (!state) return;
      const node = str(metadata?.langgraph_node);
      const hidden = tags?.includes("langsmith:hidden") ?? false;
      if (node === undefined || node !== runName || hidden || node.startsWith("__")) return;
      const parentNode = nodes.get(parentRunId);
      if (parentNode && parentNode.name === node) return; // a subgraph's own chain inside its node
      nodes.set(runId, { root: rootOf.get(runId)!, name: node, t0: now() });
      state.run.stepStart(node, typeof metadata?.langgraph_step === "number" ? { langgraph_step: metadata.langgraph_step } : undefined);
    }),

    handleChainEnd: guard((outputs, runId) => {
      const root = roots.get(runId);
      if (root) {
        const interrupts = isObj(outputs) ? outputs.__interrupt__ : undefined;
        if (Array.isArray(interrupts) && interrupts.length > 0) reportInterrupts(root, interrupts);
        if (root.waiting) {
          if (root.threadId !== undefined) rememberWaiting(root.threadId, root.run);
        } else {
          root.run.end(simplify(outputs));
        }
        finishRoot(runId);
        return;
      }
      const node = nodes.get(runId);
      if (node) {
        nodes.delete(runId);
        rootFor(runId)?.run.stepEnd(node.name, { durationMs: now() - node.t0, output: captureOutputs ? simplify(outputs) : undefined });
      }
    }),

    handleChainError: guard((err, runId) => {
      const root = roots.get(runId);
      if (root) {
        if (isInterrupt(err)) {
          reportInterrupts(root, (err as { interrupts?: unknown }).interrupts ?? []);
          if (root.threadId !== undefined) rememberWaiting(root.threadId, root.run);
        } else if (!CONTROL_FLOW_ERRORS.has(errName(err))) {
          root.run.fail(err);
        }
        finishRoot(runId);
        return;
      }
      const node = nodes.get(runId);
      if (node) {
        nodes.delete(runId);
        const state = rootFor(runId);
        if (!state) return;
        if (isInterrupt(err)) {
          state.run.stepEnd(node.name, { durationMs: now() - node.t0, extra: { interrupted: true } });
          reportInterrupts(state, (err as { interrupts?: unknown }).interrupts ?? []);
        } else if (CONTROL_FLOW_ERRORS.has(errName(err))) {
          state.run.stepEnd(node.name, { durationMs: now() - node.t0 });
        } else {
          state.run.stepEnd(node.name, { durationMs: now() - node.t0, error: err });
        }
      }
    }),

    handleToolStart: guard((tool, input, runId, parentRunId, _tags, _metadata, runName, toolCallId) => {
      const state = attach(runId, parentRunId);
      if (!state) return;
      const id = isObj(tool) && Array.isArray(tool.id) ? tool.id[tool.id.length - 1] : undefined;
      const name = str(runName) ?? str(isObj(tool) ? tool.name : undefined) ?? str(id) ?? "tool";
      tools.set(runId, { root: rootOf.get(runId)!, name, t0: now(), input });
      state.run.toolStart(name, input, toolCallId ? { tool_call_id: toolCallId } : undefined);
    }),

    handleToolEnd: guard((output, runId) => {
      const t = tools.get(runId);
      if (!t) return;
      tools.delete(runId);
      const content = isObj(output) && "content" in output && (typeof output.getType === "function" || typeof output._getType === "function") ? output.content : output;
      rootFor(runId)?.run.toolEnd(t.name, { durationMs: now() - t.t0, output: content });
    }),

    handleToolError: guard((err, runId) => {
      const t = tools.get(runId);
      if (!t) return;
      tools.delete(runId);
      rootFor(runId)?.run.toolEnd(t.name, { durationMs: now() - t.t0, error: err });
    }),

    handleChatModelStart: guard((_llm, _messages, runId, parentRunId, extraParams, _tags, metadata) => {
      if (!attach(runId, parentRunId)) return;
      llmModels.set(runId, modelFromStart(extraParams, metadata));
    }),

    handleLLMStart: guard((_llm, _prompts, runId, parentRunId, extraParams, _tags, metadata) => {
      if (!attach(runId, parentRunId)) return;
      llmModels.set(runId, modelFromStart(extraParams, metadata));
    }),

    handleLLMEnd: guard((output, runId) => {
      const state = rootFor(runId);
      if (!state) return;
      const u = usageOf(output);
      const model = u.model ?? llmModels.get(runId);
      llmModels.delete(runId);
      if (u.found || model) state.run.addUsage({ promptTokens: u.prompt, completionTokens: u.completion, totalTokens: u.total, model });
    }),

    handleLLMError: guard((_err, runId) => {
      llmModels.delete(runId);
    }),

    async waitForAnswer(threadId, waitOptions = {}) {
      const sdkRunId = waitingByThread.get(threadId)?.sdkRunId ?? sdkRunIdFor(threadId, threadId);
      const answer = await client().waitForHumanInput(sdkRunId, waitOptions);
      answeredBy.set(threadId, answer.respondedBy);
      return answer;
    },

    sdkRunIdFor(threadId) {
      return waitingByThread.get(threadId)?.sdkRunId ?? sdkRunIdFor(threadId, threadId);
    },
  };
  return handler;
}

function modelFromStart(extraParams: Record<string, unknown> | undefined, metadata: Record<string, unknown> | undefined): string | undefined {
  const inv = isObj(extraParams?.invocation_params) ? extraParams.invocation_params : undefined;
  return str(inv?.model) ?? str(inv?.model_name) ?? str(inv?.modelName) ?? str(metadata?.ls_model_name);
}

/** Token usage of one model call: usage_metadata on the messages, else llmOutput.tokenUsage / usage. */
function usageOf(output: unknown): { prompt: number; completion: number; total: number; model?: string; found: boolean } {
  let prompt = 0;
  let completion = 0;
  let total = 0;
  let found = false;
  let model: string | undefined;
  const gens = isObj(output) && Array.isArray(output.generations) ? output.generations : [];
  for (const list of gens) {
    for (const gen of Array.isArray(list) ? list : [list]) {
      const msg = isObj(gen) && isObj(gen.message) ? gen.message : undefined;
      const um = msg && isObj(msg.usage_metadata) ? msg.usage_metadata : undefined;
      if (um) {
        found = true;
        const p = num(um.input_tokens);
        const c = num(um.output_tokens);
        prompt += p;
        completion += c;
        total += num(um.total_tokens) || p + c;
      }
      const rm = msg && isObj(msg.response_metadata) ? msg.response_metadata : undefined;
      model ??= str(rm?.model_name) ?? str(rm?.model);
    }
  }
  const llmOutput = isObj(output) && isObj(output.llmOutput) ? output.llmOutput : undefined;
  if (!found && llmOutput) {
    const tu = [llmOutput.tokenUsage, llmOutput.token_usage, llmOutput.usage, llmOutput.estimatedTokenUsage].find(isObj);
    if (tu) {
      found = true;
      prompt = num(tu.promptTokens) || num(tu.prompt_tokens) || num(tu.input_tokens);
      completion = num(tu.completionTokens) || num(tu.completion_tokens) || num(tu.output_tokens);
      total = num(tu.totalTokens) || num(tu.total_tokens) || prompt + completion;
    }
  }
  model ??= str(llmOutput?.model_name) ?? str(llmOutput?.model);
  return { prompt, completion, total, model, found };
}

type HandlerFactory = {
  new (options?: CallbackHandlerOptions): RunwatchCallbackHandler;
  (options?: CallbackHandlerOptions): RunwatchCallbackHandler;
};

/**
 * `new CallbackHandler({ agentName })` (or without `new`): the same plain-object handler as
 * createCallbackHandler(), named like the Python client's runwatch.langchain.CallbackHandler.
 */
export const CallbackHandler = function CallbackHandler(options?: CallbackHandlerOptions) {
  return createCallbackHandler(options);
} as unknown as HandlerFactory;

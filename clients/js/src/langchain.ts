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
 *   invoke(new Command({resume}))      → human_input_received on the run the interrupt paused
 * The root's own `tags` and `metadata` (invoke's config) are the run's, LangChain's and LangGraph's internal ones left out.
 * Sessions: `configurable.thread_id` is the run's session_id, and each invocation is its own run (id: LangChain's root
 * run id). A resume continues the paused run: the one this handler saw, else the session's run that the server says
 * waits for input (so another process, another handler, can resume it). `runIdFromThread: true` keeps the older
 * behaviour: the thread id is the run id, one run per thread.
 * Concurrent invocations are told apart by their root run id.
 */
import { getDefaultClient, type Runwatch } from "./client.js";
import type { CallbackHandlerOptions, RunwatchCallbackHandler } from "./langchain-types.js";
import type { PromptRef } from "./langchain-support.js";
import { safeStringify } from "./json.js";
import { ThreadRuns } from "./langchain-threads.js";
import { currentRun } from "./current-run.js";
import { Run } from "./run.js";
import { CONTROL_FLOW_ERRORS, describeInterrupt, errName, isInterrupt, isObj, messagesOf, modelFromStart, nodePath, now, promptOf, resumeValue, runMetadata, runTags, simplify, str, usageOf, firstGenerationText } from "./langchain-support.js";

export type { CallbackHandlerOptions, RunwatchCallbackHandler } from "./langchain-types.js";

interface RootState {
  readonly run: Run;
  readonly threadId: string | undefined;
  readonly children: Set<string>;
  readonly reportedInterrupts: Set<string>;
  waiting: boolean;
  /** False for a run the graph was invoked inside (`client.run(…, fn)`): fn's end ends it, not the graph's. */
  readonly owned: boolean;
}

interface Timed {
  readonly root: string;
  readonly name: string;
  /** The nearest enclosing span (LangChain run id), if any. */
  readonly parentSpanId?: string;
  readonly t0: number;
  readonly input?: unknown;
}

export function createCallbackHandler(options: CallbackHandlerOptions = {}): RunwatchCallbackHandler {
  const client = (): Runwatch => options.client ?? getDefaultClient();
  const captureOutputs = options.captureStepOutputs ?? true;

  const roots = new Map<string, RootState>();
  const rootOf = new Map<string, string>();
  const nodes = new Map<string, Timed>();
  const tools = new Map<string, Timed>();
  const llms = new Map<string, Timed & { model?: string; provider?: string; prompt?: PromptRef }>();
  /** LangChain's run tree (child → parent) and which runs are spans (a node, a tool, a model call). */
  const parentOf = new Map<string, string | undefined>();
  const spanRuns = new Set<string>();
  /** The nearest ancestor that is a span: tools nest in their node, model calls in theirs, subgraph nodes in the outer node. */
  const spanParent = (parentRunId: string | undefined): string | undefined => {
    for (let id = parentRunId, hops = 0; id !== undefined && hops < 1000; hops++) {
      if (spanRuns.has(id)) return id;
      id = parentOf.get(id);
    }
    return undefined;
  };
  const threads = new ThreadRuns(options, client);
  const answeredBy = new Map<string, string | undefined>();

  /** Registers a child run under its root; undefined when the parent is unknown (not ours). */
  const attach = (runId: string, parentRunId: string | undefined): RootState | undefined => {
    const root = parentRunId ? rootOf.get(parentRunId) : undefined;
    if (root === undefined) return undefined;
    const state = roots.get(root);
    if (!state) return undefined;
    rootOf.set(runId, root);
    state.children.add(runId);
    parentOf.set(runId, parentRunId);
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
      llms.delete(child);
      parentOf.delete(child);
      spanRuns.delete(child);
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

  /** Observability must never break the graph: failures are swallowed (a promise LangChain awaits included). */
  const guard =
    <A extends unknown[]>(fn: (...args: A) => void | Promise<void>) =>
    (...args: A): void | Promise<void> => {
      try {
        const result = fn(...args);
        if (result) return result.catch(() => undefined);
      } catch {
        // swallowed, as above
      }
    };

  const agentNameOf = (runName: string | undefined, fallback: string): string => options.agentName ?? runName ?? fallback;
  const startFresh = (inputs: unknown, sdkRunId: string, threadId: string | undefined, metadata: Record<string, unknown> | undefined, runName: string | undefined, tags: string[] | undefined): Run =>
    client().startRun({
      agentName: agentNameOf(runName, "langchain"),
      input: simplify(inputs),
      sdkRunId,
      sessionId: threadId,
      framework: options.framework ?? (metadata?.ls_integration === "langgraph" ? "langgraph" : "langchain"),
      configVersion: options.configVersion,
      tags: runTags(tags),
      metadata: runMetadata(metadata),
    });
  /** A run the root reports into without starting it (an outer run, a resumed one): the config's additions go with its next event. */
  const describe = (run: Run, tags: string[] | undefined, metadata: Record<string, unknown> | undefined): Run => {
    const own = runTags(tags);
    if (own.length > 0) run.addTags(...own);
    const md = runMetadata(metadata);
    if (Object.keys(md).length > 0) run.setMetadata(md);
    return run;
  };

  const openRoot = (runId: string, run: Run, threadId: string | undefined, owned = true): void => {
    roots.set(runId, { run, threadId, children: new Set(), reportedInterrupts: new Set(), waiting: false, owned });
    rootOf.set(runId, runId);
  };

  /** Returns a promise only when it must ask the server which run a resume continues (LangChain awaits it). */
  const onStartRoot = (inputs: unknown, runId: string, metadata: Record<string, unknown> | undefined, runName: string | undefined, tags: string[] | undefined): void | Promise<void> => {
    const threadId = str(metadata?.thread_id) ?? (typeof metadata?.thread_id === "number" ? String(metadata.thread_id) : undefined);
    const resume = resumeValue(inputs);
    const outer = currentRun();
    // Inside `client.run(…, fn)` (an experiment's task, say): the graph reports into that run instead of opening one.
    if (outer && outer.reportsTo(client()) && !resume) return openRoot(runId, describe(outer, tags, metadata), threadId, false);
    const paused = threads.take(threadId);
    if (!resume) return openRoot(runId, startFresh(inputs, threads.idFor(threadId, runId), threadId, metadata, runName, tags), threadId);
    const continueRun = (id: string | undefined): void => {
      let run: Run;
      if (paused && paused.sdkRunId === id) run = describe(paused, tags, metadata);
      else if (id !== undefined) run = describe(new Run(client(), id, agentNameOf(runName, "langgraph"), options.configVersion, threadId), tags, metadata);
      else return openRoot(runId, startFresh(inputs, runId, threadId, metadata, runName, tags), threadId); // nothing paused is known
      const by = threadId !== undefined && answeredBy.has(threadId) ? answeredBy.get(threadId) : options.respondedBy;
      if (threadId !== undefined) answeredBy.delete(threadId);
      run.humanInputReceived(resume.resume, by);
      openRoot(runId, run, threadId);
    };
    const known = paused?.sdkRunId ?? (threadId !== undefined ? threads.known(threadId) : threads.idFor(undefined, runId));
    if (known !== undefined || threadId === undefined) return continueRun(known);
    return client()
      .waitingRunOf(threadId)
      .catch(() => undefined) // the server cannot be asked: the resume is reported as a run of its own
      .then(continueRun);
  };

  /** A model call inside a run we follow becomes an LLM span (its LangChain run id is the span id). */
  const llmStart = (llm: unknown, input: unknown, runId: string, parentRunId: string | undefined, extraParams: Record<string, unknown> | undefined, metadata: Record<string, unknown> | undefined, runName: string | undefined): void => {
    const state = attach(runId, parentRunId);
    if (!state) return;
    const id = isObj(llm) && Array.isArray(llm.id) ? llm.id[llm.id.length - 1] : undefined;
    const name = str(runName) ?? str(id) ?? "llm";
    const model = modelFromStart(extraParams, metadata);
    const provider = str(metadata?.ls_provider);
    const parentSpanId = spanParent(parentRunId);
    llms.set(runId, { root: rootOf.get(runId)!, name, t0: now(), model, provider, parentSpanId, prompt: promptOf(metadata) });
    spanRuns.add(runId);
    state.run.llmCallStart(name, { model, provider, input: captureOutputs ? simplify(input) : undefined }, { spanId: runId, parentSpanId });
  };

  const handler: RunwatchCallbackHandler = {
    // LangChain awaits these (cheap, synchronous) methods, so every event is queued before invoke() returns.
    awaitHandlers: true,

    handleChainStart: guard((_chain, inputs, runId, parentRunId, tags, metadata, _runType, runName) => {
      if (!parentRunId || !rootOf.has(parentRunId)) {
        return onStartRoot(inputs, runId, metadata, runName, tags);
      }
      const state = attach(runId, parentRunId);
      if (!state) return;
      const node = str(metadata?.langgraph_node);
      const hidden = tags?.includes("langsmith:hidden") ?? false;
      if (node === undefined || node !== runName || hidden || node.startsWith("__")) return;
      const parentNode = nodes.get(parentRunId);
      if (parentNode && parentNode.name === node) return; // a subgraph's own chain inside its node
      const name = nodePath(metadata, node);
      const parentSpanId = spanParent(parentRunId);
      nodes.set(runId, { root: rootOf.get(runId)!, name, t0: now(), parentSpanId });
      spanRuns.add(runId);
      state.run.stepStart(name, typeof metadata?.langgraph_step === "number" ? { langgraph_step: metadata.langgraph_step } : undefined, { spanId: runId, parentSpanId });
    }),

    handleChainEnd: guard((outputs, runId) => {
      const root = roots.get(runId);
      if (root) {
        const interrupts = isObj(outputs) ? outputs.__interrupt__ : undefined;
        if (Array.isArray(interrupts) && interrupts.length > 0) reportInterrupts(root, interrupts);
        if (root.waiting) {
          if (root.threadId !== undefined) threads.remember(root.threadId, root.run);
        } else if (root.owned) {
          root.run.end(simplify(outputs));
        } else {
          root.run.setOutput(simplify(outputs));
        }
        finishRoot(runId);
        return;
      }
      const node = nodes.get(runId);
      if (node) {
        nodes.delete(runId);
        rootFor(runId)?.run.stepEnd(node.name, { spanId: runId, parentSpanId: node.parentSpanId, durationMs: now() - node.t0, output: captureOutputs ? simplify(outputs) : undefined });
      }
    }),

    handleChainError: guard((err, runId) => {
      const root = roots.get(runId);
      if (root) {
        if (isInterrupt(err)) {
          reportInterrupts(root, (err as { interrupts?: unknown }).interrupts ?? []);
          if (root.threadId !== undefined) threads.remember(root.threadId, root.run);
        } else if (!CONTROL_FLOW_ERRORS.has(errName(err)) && root.owned) {
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
        const ids = { spanId: runId, parentSpanId: node.parentSpanId };
        if (isInterrupt(err)) {
          state.run.stepEnd(node.name, { ...ids, durationMs: now() - node.t0, extra: { interrupted: true } });
          reportInterrupts(state, (err as { interrupts?: unknown }).interrupts ?? []);
        } else if (CONTROL_FLOW_ERRORS.has(errName(err))) {
          state.run.stepEnd(node.name, { ...ids, durationMs: now() - node.t0 });
        } else {
          state.run.stepEnd(node.name, { ...ids, durationMs: now() - node.t0, error: err });
        }
      }
    }),

    handleToolStart: guard((tool, input, runId, parentRunId, _tags, _metadata, runName, toolCallId) => {
      const state = attach(runId, parentRunId);
      if (!state) return;
      const id = isObj(tool) && Array.isArray(tool.id) ? tool.id[tool.id.length - 1] : undefined;
      const name = str(runName) ?? str(isObj(tool) ? tool.name : undefined) ?? str(id) ?? "tool";
      const parentSpanId = spanParent(parentRunId);
      tools.set(runId, { root: rootOf.get(runId)!, name, t0: now(), input, parentSpanId });
      spanRuns.add(runId);
      state.run.toolStart(name, input, toolCallId ? { tool_call_id: toolCallId } : undefined, { spanId: runId, parentSpanId });
    }),

    handleToolEnd: guard((output, runId) => {
      const t = tools.get(runId);
      if (!t) return;
      tools.delete(runId);
      const content = isObj(output) && "content" in output && (typeof output.getType === "function" || typeof output._getType === "function") ? output.content : output;
      rootFor(runId)?.run.toolEnd(t.name, { spanId: runId, parentSpanId: t.parentSpanId, durationMs: now() - t.t0, output: content });
    }),

    handleToolError: guard((err, runId) => {
      const t = tools.get(runId);
      if (!t) return;
      tools.delete(runId);
      rootFor(runId)?.run.toolEnd(t.name, { spanId: runId, parentSpanId: t.parentSpanId, durationMs: now() - t.t0, error: err });
    }),

    handleChatModelStart: guard((llm, messages, runId, parentRunId, extraParams, _tags, metadata, runName) => {
      llmStart(llm, messagesOf(messages), runId, parentRunId, extraParams, metadata, runName);
    }),

    handleLLMStart: guard((llm, prompts, runId, parentRunId, extraParams, _tags, metadata, runName) => {
      llmStart(llm, prompts, runId, parentRunId, extraParams, metadata, runName);
    }),

    handleLLMEnd: guard((output, runId) => {
      const state = rootFor(runId);
      const call = llms.get(runId);
      llms.delete(runId);
      if (!state || !call) return;
      const u = usageOf(output);
      const model = u.model ?? call.model;
      // The call's own span with its usage (the server sums a run's calls); run_end's totals stay for older servers.
      state.run.llmCallEnd(call.name, {
        spanId: runId, parentSpanId: call.parentSpanId, durationMs: now() - call.t0, model, provider: call.provider, prompt: call.prompt,
        ...(u.found ? { promptTokens: u.prompt, completionTokens: u.completion, totalTokens: u.total, cachedTokens: u.cached || undefined, cacheWriteTokens: u.cacheWrite || undefined, reasoningTokens: u.reasoning || undefined } : {}),
        output: captureOutputs ? simplify(firstGenerationText(output)) : undefined,
      });
      if (u.found || model) state.run.addUsage({ promptTokens: u.prompt, completionTokens: u.completion, totalTokens: u.total, model });
    }),

    handleLLMError: guard((err, runId) => {
      const call = llms.get(runId);
      llms.delete(runId);
      if (call) rootFor(runId)?.run.llmCallEnd(call.name, { spanId: runId, parentSpanId: call.parentSpanId, durationMs: now() - call.t0, model: call.model, provider: call.provider, prompt: call.prompt, error: err });
    }),

    async waitForAnswer(threadId, waitOptions = {}) {
      const sdkRunId = await threads.waitFor(threadId, waitOptions);
      const answer = await client().waitForHumanInput(sdkRunId, waitOptions);
      answeredBy.set(threadId, answer.respondedBy);
      return answer;
    },

    sdkRunIdFor(threadId) {
      return threads.known(threadId);
    },

    findWaitingRun: (threadId) => threads.find(threadId),
  };
  return handler;
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

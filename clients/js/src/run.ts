/** One agent run: its lifecycle events, spans (steps, tool calls, LLM calls), usage, human input, tags and metadata. */
import { metadataRecord, RunAttributes, tagList, type MetadataValue } from "./attributes.js";
import { RunwatchError } from "./errors.js";
import { randomUuid } from "./ids.js";
import { errorPayload, preview, toJsonObject } from "./json.js";
import { asyncContext } from "./platform.js";
import type { ScoreOptions, ScoreValue } from "./scores.js";
import type { EventType, HumanInputOptions, LlmCallHandle, LlmUsage, RunHost, RunState, SpanIds, StepEndOptions, ToolEndOptions, Usage } from "./run-types.js";

export type { EventType, HumanInputAnswer, HumanInputOptions, LlmCallHandle, LlmUsage, RunHost, RunState, SpanIds, StepEndOptions, ToolEndOptions, Usage } from "./run-types.js";

/** The span entered around the current async call (steps, tool calls and LLM calls nest in it). */
const currentSpan = asyncContext<{ run: Run; spanId: string }>();

const now = (): number => (typeof performance !== "undefined" && typeof performance.now === "function" ? performance.now() : Date.now());
const count = (n: number | undefined): number | undefined =>
  typeof n === "number" && Number.isFinite(n) && n >= 0 ? Math.round(n) : undefined;

/**
 * One agent run. Created by `client.run()` / `client.startRun()`. Every method is safe to call in any state
 * and never throws because of Runwatch itself (errors of the wrapped functions are rethrown unchanged).
 */
export class Run {
  private prompt = 0;
  private completion = 0;
  private total = 0;
  private usageSeen = false;
  private modelName: string | undefined;
  private cost: number | undefined;
  private outputValue: unknown;
  private hasOutput = false;
  private stateValue: RunState = "running";

  constructor(
    private readonly host: RunHost,
    readonly sdkRunId: string,
    readonly agentName: string,
    readonly configVersion?: number,
    /** The session (conversation, thread) the run belongs to; every event of the run names it. */
    readonly sessionId?: string,
    /** Tags, metadata, end user, environment, release: all sent on run_start, later additions on the next event. */
    private attributes?: RunAttributes,
  ) {}

  /** Whether this run reports through `host` (a client). */
  reportsTo(host: RunHost): boolean {
    return this.host === host;
  }

  /** running, waiting_for_input, success or error (as far as this client knows). */
  get state(): RunState {
    return this.stateValue;
  }

  get ended(): boolean {
    return this.stateValue === "success" || this.stateValue === "error";
  }

  /** Current usage totals (what run_end will carry). */
  get usage(): Readonly<Usage> {
    return {
      promptTokens: this.usageSeen ? this.prompt : undefined,
      completionTokens: this.usageSeen ? this.completion : undefined,
      totalTokens: this.usageSeen ? this.total : undefined,
      model: this.modelName,
      costUsd: this.cost,
    };
  }

  /** Sends any event of this run (low level; the helpers below cover the event types of docs/API.md). */
  emit(type: EventType, payload: Record<string, unknown>, ids?: SpanIds): void {
    const attributes = this.attributes?.pending ? this.attributes.takePending() : undefined;
    this.host.emit(this.sdkRunId, this.agentName, type, payload, this.configVersion, ids, this.sessionId, attributes);
  }

  // ---- tags and metadata --------------------------------------------------------------------------------

  /** The run's tags (what it sent and will send). */
  get tags(): string[] {
    return [...(this.attributes?.tags ?? [])];
  }

  /** The run's metadata, as sent (values that are not strings, numbers or booleans JSON-encoded). */
  get metadata(): Record<string, MetadataValue> {
    return { ...this.attributes?.metadata };
  }

  /** Adds tags to the run; they go with its next event (a run keeps at most 50). */
  addTags(...tags: string[]): void {
    const attributes = this.attributesToChange();
    attributes?.addTags(tagList(tags, this.reportInvalid));
  }

  /** Sets metadata keys of the run; they go with its next event (at most 64 keys; a later value of a key replaces the earlier). */
  setMetadata(metadata: Record<string, unknown>): void {
    const attributes = this.attributesToChange();
    attributes?.setMetadata(metadataRecord(metadata, this.reportInvalid));
  }

  private readonly reportInvalid = (message: string): void => this.host.report(new RunwatchError("invalid", message));

  private attributesToChange(): RunAttributes | undefined {
    if (this.ended) {
      this.reportInvalid(`run ${this.sdkRunId} has ended; tags and metadata added now are not sent`);
      return undefined;
    }
    return (this.attributes ??= new RunAttributes(this.sdkRunId, this.reportInvalid));
  }

  /** New span ids: the parent is the span entered around this call (same run), unless given. */
  private spanIds(parentSpanId?: string): Required<Pick<SpanIds, "spanId">> & SpanIds {
    const around = currentSpan.get();
    return { spanId: randomUuid(), parentSpanId: parentSpanId ?? (around?.run === this ? around.spanId : undefined) };
  }

  /** Runs fn inside a span: start, then end with duration and output (or the error, rethrown); nested spans nest. */
  private inSpan<T>(start: (ids: SpanIds) => void, end: (ids: SpanIds, o: { durationMs: number; output?: T; error?: unknown }) => void, fn: () => T | Promise<T>, parentSpanId?: string): Promise<T> {
    const ids = this.spanIds(parentSpanId);
    const t0 = now();
    start(ids);
    const fail = (err: unknown): Promise<never> => {
      end(ids, { durationMs: now() - t0, error: err });
      return Promise.reject(err);
    };
    let result: T | Promise<T>;
    try {
      result = currentSpan.run({ run: this, spanId: ids.spanId }, fn);
    } catch (err) {
      return fail(err);
    }
    if (result !== null && typeof (result as { then?: unknown })?.then === "function") {
      return (result as Promise<T>).then((r) => {
        end(ids, { durationMs: now() - t0, output: r });
        return r;
      }, fail);
    }
    end(ids, { durationMs: now() - t0, output: result as T }); // a synchronous fn: no extra turn of the event loop
    return Promise.resolve(result as T);
  }

  // ---- steps ------------------------------------------------------------------------------------------

  /** Runs `fn` as a step: step start, then step end with duration and output (or the error, rethrown). */
  step<T>(name: string, fn: (run: Run) => T | Promise<T>, options: { parentSpanId?: string } = {}): Promise<T> {
    return this.inSpan((ids) => this.stepStart(name, undefined, ids), (ids, o) => this.stepEnd(name, { ...ids, ...o }), () => fn(this), options.parentSpanId);
  }

  stepStart(name: string, extra?: Record<string, unknown>, ids?: SpanIds): void {
    this.emit("step", { ...extra, node_name: name, phase: "start" }, ids);
  }

  stepEnd(name: string, o: StepEndOptions = {}): void {
    const payload: Record<string, unknown> = { ...o.extra, node_name: name, phase: "end", duration_ms: count(o.durationMs) };
    if (o.output !== undefined) payload.output = toJsonObject(o.output);
    if (o.error !== undefined) {
      const e = errorPayload(o.error);
      payload.error = `${e.error_type}: ${e.error_message}`;
    }
    this.emit("step", payload, o);
  }

  // ---- LLM calls --------------------------------------------------------------------------------------

  /**
   * Runs `fn` as an LLM call, a span with its own model, tokens and cost (the server sums a run's calls):
   * `await run.llmCall("chat", { model: "gpt-4o", provider: "openai", input: messages }, async (call) => { … call.setUsage({ promptTokens, completionTokens }); return reply; })`
   */
  llmCall<T>(name: string, options: LlmUsage & { input?: unknown; parentSpanId?: string }, fn: (call: LlmCallHandle) => T | Promise<T>): Promise<T> {
    const usage: LlmUsage = { model: options.model, provider: options.provider, prompt: options.prompt };
    let output: unknown;
    let hasOutput = false;
    let spanId = "";
    const handle: LlmCallHandle = {
      get spanId() { return spanId; },
      setUsage: (u) => {
        for (const k in u) {
          const v = u[k as keyof LlmUsage];
          if (v !== undefined) (usage as Record<string, unknown>)[k] = v;
        }
      },
      setOutput: (o) => { output = o; hasOutput = true; },
    };
    return this.inSpan(
      (ids) => { spanId = ids.spanId!; this.llmCallStart(name, { model: options.model, provider: options.provider, input: options.input }, ids); },
      (ids, o) => this.llmCallEnd(name, { ...usage, ...ids, durationMs: o.durationMs, error: o.error, output: hasOutput ? output : o.output }),
      () => fn(handle),
      options.parentSpanId,
    );
  }

  /** Low level: an LLM call starts (a step of kind "llm"). */
  llmCallStart(name: string, o: Pick<LlmUsage, "model" | "provider"> & { input?: unknown } = {}, ids?: SpanIds): void {
    this.emit("step", { node_name: name, kind: "llm", phase: "start", model: o.model, provider: o.provider, input: o.input }, ids); // serialised (safely) with the event
  }

  /** Low level: an LLM call ends, with its usage (send the same spanId as its start, or only this event). */
  llmCallEnd(name: string, o: LlmUsage & StepEndOptions = {}): void {
    // Built directly (not through stepEnd): the hot path of every model call, and the answer stays as it is.
    const payload: Record<string, unknown> = { ...o.extra, node_name: name, kind: "llm", phase: "end", duration_ms: count(o.durationMs) };
    if (o.model) payload.model = o.model;
    if (o.provider) payload.provider = o.provider;
    const counts: [string, number | undefined][] = [
      ["prompt_tokens", o.promptTokens], ["completion_tokens", o.completionTokens], ["total_tokens", o.totalTokens],
      ["cached_tokens", o.cachedTokens], ["cache_write_tokens", o.cacheWriteTokens], ["reasoning_tokens", o.reasoningTokens],
    ];
    for (const [k, v] of counts) {
      const c = count(v);
      if (c !== undefined) payload[k] = c;
    }
    if (typeof o.costUsd === "number" && Number.isFinite(o.costUsd) && o.costUsd >= 0) payload.cost_usd = o.costUsd;
    if (o.prompt?.name && o.prompt.version) Object.assign(payload, { prompt_name: o.prompt.name, prompt_version: o.prompt.version });
    if (o.output !== undefined) payload.output = o.output; // serialised (safely) with the event
    if (o.error !== undefined) {
      const e = errorPayload(o.error);
      payload.error = `${e.error_type}: ${e.error_message}`;
    }
    this.emit("step", payload, o);
  }

  // ---- tools ------------------------------------------------------------------------------------------

  /** Runs `fn(input)` as a tool call: tool_call start/end with input/output previews and duration. */
  toolCall<I, T>(name: string, input: I, fn: (input: I) => T | Promise<T>, options: { parentSpanId?: string } = {}): Promise<T> {
    return this.inSpan((ids) => this.toolStart(name, input, undefined, ids), (ids, o) => this.toolEnd(name, { ...ids, ...o, input }), () => fn(input), options.parentSpanId);
  }

  toolStart(name: string, input?: unknown, extra?: Record<string, unknown>, ids?: SpanIds): void {
    this.emit("tool_call", { ...extra, tool_name: name, phase: "start", input_preview: input === undefined ? undefined : preview(input) }, ids);
  }

  toolEnd(name: string, o: ToolEndOptions = {}): void {
    const payload: Record<string, unknown> = {
      ...o.extra,
      tool_name: name,
      phase: "end",
      duration_ms: count(o.durationMs),
      input_preview: o.input === undefined ? undefined : preview(o.input),
    };
    if (o.error !== undefined) {
      const e = errorPayload(o.error);
      payload.output_preview = preview(`${e.error_type}: ${e.error_message}`);
      payload.error = `${e.error_type}: ${e.error_message}`;
    } else if (o.output !== undefined) {
      payload.output_preview = preview(o.output);
    }
    this.emit("tool_call", payload, o);
  }

  // ---- usage and output ---------------------------------------------------------------------------------

  /** Replaces the run's usage (what run_end reports). */
  setUsage(u: Usage): void {
    this.prompt = count(u.promptTokens) ?? 0;
    this.completion = count(u.completionTokens) ?? 0;
    this.total = count(u.totalTokens) ?? this.prompt + this.completion;
    this.usageSeen = true;
    if (u.model) this.modelName = u.model;
    if (typeof u.costUsd === "number" && Number.isFinite(u.costUsd) && u.costUsd >= 0) this.cost = u.costUsd;
  }

  /** Adds one model call's usage to the run's totals. */
  addUsage(u: Usage): void {
    const p = count(u.promptTokens) ?? 0;
    const c = count(u.completionTokens) ?? 0;
    this.prompt += p;
    this.completion += c;
    this.total += count(u.totalTokens) ?? p + c;
    this.usageSeen = true;
    if (u.model) this.modelName = u.model;
    if (typeof u.costUsd === "number" && Number.isFinite(u.costUsd) && u.costUsd >= 0) this.cost = (this.cost ?? 0) + u.costUsd;
  }

  /** Sets the output reported in run_end (otherwise the return value of the run callback is used). */
  setOutput(output: unknown): void {
    this.outputValue = output;
    this.hasOutput = true;
  }

  /** Scores this run, or one of its spans with `spanId` (Runwatch.score); resolves to the score_id. */
  score(name: string, value: ScoreValue, options: ScoreOptions = {}): Promise<string> {
    return this.host.score(this.sdkRunId, name, value, options);
  }

  // ---- human in the loop ---------------------------------------------------------------------------------

  /**
   * Asks a human: sends human_input_requested (run → waiting_for_input), waits for the answer given on the
   * dashboard (long-polling GET /api/runs/{sdk_run_id}/input), sends human_input_received with responded_by
   * (run → running) and returns the answer. Rejects only on timeout/abort or when the server refuses the key.
   */
  async requestHumanInput(question: string, options: HumanInputOptions = {}): Promise<string> {
    this.humanInputRequested(question, options);
    // Make sure the question is on the dashboard before we start waiting for its answer.
    await this.host.flush(5_000);
    const answer = await this.host.waitForHumanInput(this.sdkRunId, { timeoutMs: options.timeoutMs, signal: options.signal });
    this.humanInputReceived(answer.response, answer.respondedBy);
    return answer.response;
  }

  /** Low level: reports that the run waits for a human (for frameworks that wait on their own). */
  humanInputRequested(question: string, options: Pick<HumanInputOptions, "context" | "channel"> = {}): void {
    this.emit("human_input_requested", {
      question,
      context: toJsonObject(options.context ?? {}),
      channel: options.channel ?? "dashboard",
    });
    if (!this.ended) this.stateValue = "waiting_for_input";
  }

  /** Low level: reports the human's answer. */
  humanInputReceived(response: unknown, respondedBy?: string): void {
    this.emit("human_input_received", { response: typeof response === "string" ? response : preview(response, 100_000), responded_by: respondedBy });
    if (!this.ended) this.stateValue = "running";
  }

  // ---- end ---------------------------------------------------------------------------------------------

  /** Sends run_end with output and usage. Idempotent: only the first end() / fail() counts. */
  end(output?: unknown): void {
    if (this.ended) return;
    this.stateValue = "success";
    const out = output !== undefined ? output : this.hasOutput ? this.outputValue : undefined;
    const u = this.usage;
    this.emit("run_end", {
      output: out === undefined ? undefined : toJsonObject(out),
      prompt_tokens: u.promptTokens,
      completion_tokens: u.completionTokens,
      total_tokens: u.totalTokens,
      model: u.model,
      cost_usd: u.costUsd,
    });
  }

  /** Sends an error event (error_type, error_message, traceback). Idempotent with end(). */
  fail(error: unknown): void {
    if (this.ended) return;
    this.stateValue = "error";
    const u = this.usage;
    this.emit("error", {
      ...errorPayload(error),
      prompt_tokens: u.promptTokens,
      completion_tokens: u.completionTokens,
      total_tokens: u.totalTokens,
      model: u.model,
    });
  }
}

import { errorPayload, preview, toJsonObject } from "./json.js";

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

/** What a Run needs from its client (kept as an interface so the two modules do not import each other). */
export interface RunHost {
  emit(sdkRunId: string, agentName: string, type: EventType, payload: Record<string, unknown>, configVersion?: number): void;
  flush(timeoutMs?: number): Promise<boolean>;
  waitForHumanInput(sdkRunId: string, options?: Pick<HumanInputOptions, "timeoutMs" | "signal">): Promise<HumanInputAnswer>;
}

export interface StepEndOptions {
  durationMs?: number;
  output?: unknown;
  error?: unknown;
  /** Extra payload fields (kept by the server). */
  extra?: Record<string, unknown>;
}

export interface ToolEndOptions {
  durationMs?: number;
  output?: unknown;
  error?: unknown;
  input?: unknown;
  extra?: Record<string, unknown>;
}

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
  ) {}

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
  emit(type: EventType, payload: Record<string, unknown>): void {
    this.host.emit(this.sdkRunId, this.agentName, type, payload, this.configVersion);
  }

  // ---- steps ------------------------------------------------------------------------------------------

  /** Runs `fn` as a step: step start, then step end with duration and output (or the error, rethrown). */
  async step<T>(name: string, fn: (run: Run) => T | Promise<T>): Promise<T> {
    const t0 = now();
    this.stepStart(name);
    try {
      const result = await fn(this);
      this.stepEnd(name, { durationMs: now() - t0, output: result });
      return result;
    } catch (err) {
      this.stepEnd(name, { durationMs: now() - t0, error: err });
      throw err;
    }
  }

  stepStart(name: string, extra?: Record<string, unknown>): void {
    this.emit("step", { ...extra, node_name: name, phase: "start" });
  }

  stepEnd(name: string, o: StepEndOptions = {}): void {
    const payload: Record<string, unknown> = { ...o.extra, node_name: name, phase: "end", duration_ms: count(o.durationMs) };
    if (o.output !== undefined) payload.output = toJsonObject(o.output);
    if (o.error !== undefined) {
      const e = errorPayload(o.error);
      payload.error = `${e.error_type}: ${e.error_message}`;
    }
    this.emit("step", payload);
  }

  // ---- tools ------------------------------------------------------------------------------------------

  /** Runs `fn(input)` as a tool call: tool_call start/end with input/output previews and duration. */
  async toolCall<I, T>(name: string, input: I, fn: (input: I) => T | Promise<T>): Promise<T> {
    const t0 = now();
    this.toolStart(name, input);
    try {
      const result = await fn(input);
      this.toolEnd(name, { durationMs: now() - t0, output: result, input });
      return result;
    } catch (err) {
      this.toolEnd(name, { durationMs: now() - t0, error: err, input });
      throw err;
    }
  }

  toolStart(name: string, input?: unknown, extra?: Record<string, unknown>): void {
    this.emit("tool_call", { ...extra, tool_name: name, phase: "start", input_preview: input === undefined ? undefined : preview(input) });
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
    this.emit("tool_call", payload);
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

import { label, MAX_ENVIRONMENT_CHARS, MAX_RELEASE_CHARS, RunAttributes, type RunAttributeOptions, type WireAttributes } from "./attributes.js";
import { uuidv7, randomUuid } from "./ids.js";
import { safeStringify, toJsonObject, truncate } from "./json.js";
import { readEnv } from "./platform.js";
import { insideRun } from "./current-run.js";
import { Run, type EventType, type HumanInputAnswer, type HumanInputOptions, type RunHost, type SpanIds } from "./run.js";
import { RunwatchError, Transport, retryAfterMs, type TransportOptions, type TransportStats } from "./transport.js";
import { postScore, type ScoreOptions, type ScoreValue } from "./scores.js";
import { findWaitingRun } from "./sessions.js";
import { runExperiment, type ExperimentOptions, type ExperimentSummary } from "./experiments.js";
import { listEvaluators, runEvaluator, type EvaluatorRun, type EvaluatorTarget, type ServerEvaluator } from "./evaluators.js";
import { activateConfigVersion, type Activation } from "./gate.js";
import { PromptCache, type GetPromptOptions, type Prompt } from "./prompts.js";
import { addDatasetItems, createDataset, datasetItems, getDataset, type Dataset, type DatasetItem, type DatasetItemInput } from "./datasets.js";

export const DEFAULT_BASE_URL = "http://localhost:8080";

export interface RunwatchOptions extends Partial<Omit<TransportOptions, "baseUrl" | "apiKey">> {
  /** 64-hex API key (Settings → API keys). Default: RUNWATCH_API_KEY. Without a key the client is disabled. */
  apiKey?: string;
  /** Where the Runwatch web app listens. Default: RUNWATCH_BASE_URL, else http://localhost:8080. */
  baseUrl?: string;
  /** false turns every call into a no-op (the wrapped agent code still runs). Default: true when a key is set. */
  enabled?: boolean;
  /** Log transport problems with console.warn (in addition to onError). Default: RUNWATCH_DEBUG=1. */
  debug?: boolean;
  /** Events larger than this (serialized) get their biggest fields cut down. Default 256 KiB. */
  maxEventBytes?: number;
  /** The environment of every run that names none (production, staging…). Default: RUNWATCH_ENVIRONMENT. */
  environment?: string;
  /** The release of every run that names none. Default: RUNWATCH_RELEASE. */
  release?: string;
}

/** A run's options; tags, metadata, endUser, environment and release (RunAttributeOptions) describe it. */
export interface RunOptions extends RunAttributeOptions {
  agentName: string;
  /** The run's input, shown on the dashboard (objects as they are, other values wrapped as {value}). */
  input?: unknown;
  /** Your own run id (e.g. a request id); it is the run's external id. Default: a random UUID. */
  sdkRunId?: string;
  /** e.g. "langgraph", "openai-agents". Default "custom". */
  framework?: string;
  /** The agent config version the run uses (agent registry). */
  configVersion?: number;
  /** The session (a conversation, a thread) the run belongs to: the dashboard's /sessions groups runs by it. */
  sessionId?: string;
  /** Extra fields of the run_start payload (low level; an experiment's run names its experiment and item there). */
  startFields?: Record<string, unknown>;
}

export interface EndRunOptions {
  output?: unknown;
  /** When set, the run ends with an error event instead of run_end. */
  error?: unknown;
}

/**
 * The Runwatch client. Reporting never throws into your code and never waits on the network; events are
 * batched and sent in the background. Call `await client.shutdown()` (or `flush()`) before a short-lived
 * process or serverless function returns; on Node/Bun queued events are also flushed on `beforeExit`.
 */
export class Runwatch implements RunHost {
  readonly baseUrl: string;
  readonly enabled: boolean;
  readonly apiKey: string;
  private readonly transport: Transport | undefined;
  readonly fetchImpl: typeof fetch;
  private readonly onErrorHook: (err: RunwatchError) => void;
  private readonly maxEventBytes: number;
  readonly environment: string | undefined;
  readonly release: string | undefined;
  /** Prompts read by getPrompt, by name and label or version. */
  readonly promptCache = new PromptCache(this);

  constructor(options: RunwatchOptions = {}) {
    const apiKey = options.apiKey ?? readEnv("RUNWATCH_API_KEY") ?? "";
    this.apiKey = apiKey;
    this.baseUrl = (options.baseUrl ?? readEnv("RUNWATCH_BASE_URL") ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
    this.maxEventBytes = options.maxEventBytes ?? 256 * 1024;
    this.fetchImpl = options.fetch ?? ((...args) => globalThis.fetch(...args));
    const debug = options.debug ?? ["1", "true", "yes"].includes((readEnv("RUNWATCH_DEBUG") ?? "").toLowerCase());
    const userOnError = options.onError;
    this.onErrorHook = (err) => {
      if (debug) console.warn(`[runwatch] ${err.message}`);
      try {
        userOnError?.(err);
      } catch {
        /* never let a logger break the agent */
      }
    };
    this.environment = label(options.environment ?? readEnv("RUNWATCH_ENVIRONMENT"), MAX_ENVIRONMENT_CHARS, "environment", this.reportInvalid);
    this.release = label(options.release ?? readEnv("RUNWATCH_RELEASE"), MAX_RELEASE_CHARS, "release", this.reportInvalid);
    this.enabled = (options.enabled ?? true) && apiKey !== "" && typeof globalThis.fetch === "function";
    if (!this.enabled) {
      if ((options.enabled ?? true) && apiKey === "") {
        this.onErrorHook(new RunwatchError("config", "no API key (set RUNWATCH_API_KEY or pass apiKey); Runwatch reporting is disabled"));
      }
      return;
    }
    this.transport = new Transport({ ...options, baseUrl: this.baseUrl, apiKey, fetch: this.fetchImpl, onError: this.onErrorHook });
  }

  /** Counters of the background transport (queued, sent, dropped, rejected, requests, failedRequests). */
  get stats(): Readonly<TransportStats> {
    return this.transport?.stats ?? { queued: 0, sent: 0, dropped: 0, rejected: 0, requests: 0, failedRequests: 0 };
  }

  /** Events not yet acknowledged by the server. */
  get pending(): number {
    return this.transport?.pending ?? 0;
  }

  /**
   * Runs `fn` as one agent run: run_start, then run_end (output = fn's result, or what run.setOutput() set,
   * plus usage) or, if fn throws, an error event with the stack; the error is rethrown unchanged.
   */
  async run<T>(options: RunOptions, fn: (run: Run) => T | Promise<T>): Promise<T> {
    const run = this.startRun(options);
    let result: T;
    try {
      result = await insideRun(run, () => fn(run));
    } catch (err) {
      run.fail(err);
      throw err;
    }
    run.end(result === undefined ? undefined : result);
    return result;
  }

  /** Manual API: sends run_start and returns the Run; finish it with endRun(run, …) or run.end()/run.fail(). */
  startRun(options: RunOptions): Run {
    const sdkRunId = options.sdkRunId ?? randomUuid();
    const agentName = truncate(options.agentName || "agent", 200);
    const attributes = new RunAttributes(sdkRunId, this.reportInvalid, {
      ...options,
      environment: options.environment ?? this.environment,
      release: options.release ?? this.release,
    });
    const run = new Run(this, sdkRunId, agentName, options.configVersion, options.sessionId ? truncate(options.sessionId, 200) : undefined, attributes);
    run.emit("run_start", {
      ...options.startFields,
      framework: options.framework ?? "custom",
      input: options.input === undefined ? undefined : toJsonObject(options.input),
    });
    return run;
  }

  /** Manual API: ends a run with run_end (output) or, when `error` is given, with an error event. */
  endRun(run: Run, options: EndRunOptions = {}): void {
    if (options.error !== undefined) run.fail(options.error);
    else run.end(options.output);
  }

  /** Hands a problem that does not stop the run to onError (RunHost). */
  report(err: RunwatchError): void {
    this.onErrorHook(err);
  }

  private readonly reportInvalid = (message: string): void => this.onErrorHook(new RunwatchError("invalid", message));

  /**
   * Low level: queue one event. Used by Run; available for custom integrations. `attributes` are envelope fields sent
   * as they are (tags, metadata, end_user, environment, release). Never throws.
   */
  emit(sdkRunId: string, agentName: string | undefined, type: EventType, payload: Record<string, unknown>, configVersion?: number, ids?: SpanIds, sessionId?: string, attributes?: WireAttributes): void {
    if (!this.transport) return;
    try {
      const event = {
        event_id: uuidv7(),
        event_type: type,
        sdk_run_id: sdkRunId,
        occurred_at: new Date().toISOString(),
        agent_name: agentName,
        config_version: configVersion,
        span_id: ids?.spanId || undefined,
        parent_span_id: ids?.parentSpanId || undefined,
        session_id: sessionId || undefined,
        payload,
      };
      if (attributes) Object.assign(event, attributes); // most events carry none: no spread on the hot path
      this.transport.enqueue(() => this.serialize(event));
    } catch (err) {
      this.onErrorHook(new RunwatchError("dropped", `could not build a ${type} event: ${(err as Error)?.message}`, { count: 1, cause: err }));
    }
  }

  /** Sends what is queued. Resolves true when all of it was delivered, false on timeout. Never rejects. */
  flush(timeoutMs: number = 30_000): Promise<boolean> {
    return this.transport?.flush(timeoutMs) ?? Promise.resolve(true);
  }

  /** Flushes, then stops the client (later events are dropped). */
  shutdown(timeoutMs: number = 10_000): Promise<boolean> {
    return this.transport?.shutdown(timeoutMs) ?? Promise.resolve(true);
  }

  /**
   * Scores a run or one of its spans (user feedback, an evaluation): POST /api/scores after flushing the run's
   * events; retried while the server is still storing the run. Resolves to the score_id; rejects when refused.
   */
  score(sdkRunId: string, name: string, value: ScoreValue, options: ScoreOptions = {}): Promise<string> {
    return postScore(this, sdkRunId, name, value, options);
  }

  /**
   * A prompt version by label (default "production") or number, to `compile(vars)`: from the in-process cache, else
   * the server within a short timeout, else `options.fallback`. Never waits on a refresh (src/prompts.ts).
   */
  getPrompt(name: string, options: GetPromptOptions = {}): Promise<Prompt> {
    return this.promptCache.get(name, options);
  }

  /** Creates a dataset in the key's project (POST /api/datasets). Rejects when the name is taken or refused. */
  createDataset(name: string, description?: string): Promise<Dataset> {
    return createDataset(this, name, description);
  }

  /** A dataset and its versions, newest first. */
  getDataset(name: string): ReturnType<typeof getDataset> {
    return getDataset(this, name);
  }

  /**
   * Adds or updates items as one new version, all or nothing: resolves to {version, ids, changed}; rejects with the
   * server's message naming a bad item (`items[3].input`).
   */
  addDatasetItems(name: string, items: readonly DatasetItemInput[]): ReturnType<typeof addDatasetItems> {
    return addDatasetItems(this, name, items);
  }

  /** Every item of a version (default: the current one), by id: `for await (const item of client.datasetItems(name))`. */
  datasetItems(name: string, options: { version?: number; status?: "active" | "archived" } = {}): AsyncGenerator<DatasetItem> {
    return datasetItems(this, name, options);
  }

  /**
   * Runs `task` over every active item of a dataset version as the experiment `name` (docs/EVALUATION.md): each
   * item × repetition is a run naming the experiment and the item, scored by `evaluators`; at most `maxConcurrency`
   * at once. Resolves to the server's summary (score means, errors, cost, latency p50/p95) and the page's URL.
   */
  runExperiment(options: ExperimentOptions): Promise<ExperimentSummary> {
    return runExperiment(this, options);
  }

  /** The project's server-side evaluators (LLM judges and built-in checks), at their latest versions. */
  listEvaluators(): Promise<ServerEvaluator[]> {
    return listEvaluators(this);
  }

  /**
   * Runs a server-side evaluator (its name or id) on a run, a span of it, or a dataset item with an output, as the
   * playground does: resolves to the rendered prompt, the judge's raw answer, the score (or the error that kept it
   * from being one) and the cost. Nothing is stored.
   */
  runEvaluator(nameOrId: string, target: EvaluatorTarget): Promise<EvaluatorRun> {
    return runEvaluator(this, nameOrId, target);
  }

  /**
   * Activates a config version of an agent through the activation gate (docs/EVALUATION.md): rejects with a
   * RunwatchError (status 409) naming the score and both values when its latest experiment broke a rule, unless
   * `force` with a `reason` (a key of an admin or the owner); resolves to the gate's check.
   */
  activateConfigVersion(agent: string, version: number, options: { force?: boolean; reason?: string } = {}): Promise<Activation> {
    return activateConfigVersion(this, agent, version, options);
  }

  /**
   * The sdk_run_id of the session's newest run waiting for input (undefined when none is stored): how a process that
   * did not see an interrupt finds the run a resume continues. Rejects with a RunwatchError on a refusal or no network.
   */
  waitingRunOf(sessionId: string): Promise<string | undefined> {
    return findWaitingRun(this, sessionId);
  }

  /**
   * One look at the human-input endpoint: the answer, or undefined when there is none yet. `waitSeconds`
   * (≤ 30) asks the server to hold the request until an answer arrives. Throws RunwatchError on auth failure.
   */
  async getHumanInput(sdkRunId: string, waitSeconds = 0, signal?: AbortSignal): Promise<HumanInputAnswer | undefined> {
    if (!this.enabled) throw new RunwatchError("config", "Runwatch is disabled (no API key); cannot receive human input");
    const url = `${this.baseUrl}/api/runs/${encodeURIComponent(sdkRunId)}/input${waitSeconds > 0 ? `?wait=${Math.min(30, Math.ceil(waitSeconds))}` : ""}`;
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(() => controller.abort(), (waitSeconds + 15) * 1000);
    try {
      const res = await this.fetchImpl(url, { headers: { authorization: `Bearer ${this.apiKey}` }, signal: controller.signal });
      const text = await res.text();
      if (res.status === 200) {
        const body = (text ? JSON.parse(text) : {}) as { response?: unknown; responded_by?: unknown; answered_at?: unknown };
        return {
          response: typeof body.response === "string" ? body.response : (safeStringify(body.response) ?? ""),
          respondedBy: typeof body.responded_by === "string" ? body.responded_by : undefined,
          answeredAt: typeof body.answered_at === "string" ? body.answered_at : undefined,
        };
      }
      if (res.status === 204) return undefined;
      throw new RunwatchError(res.status === 401 || res.status === 403 ? "config" : "http", `GET ${url} answered ${res.status}`, {
        status: res.status,
        body: text,
        retryInMs: retryAfterMs(res.headers.get("retry-after")),
      });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /**
   * Waits for the answer to a run's pending question, long-polling the server 30 s at a time. Transient
   * failures (network, 404 before the run is stored, 429, 5xx) are retried with backoff. Rejects with a
   * RunwatchError (code "human_input") on timeout or abort, or code "config" when the key is refused.
   */
  async waitForHumanInput(sdkRunId: string, options: Pick<HumanInputOptions, "timeoutMs" | "signal"> = {}): Promise<HumanInputAnswer> {
    const deadline = options.timeoutMs !== undefined ? Date.now() + options.timeoutMs : Infinity;
    let failures = 0;
    for (;;) {
      if (options.signal?.aborted) throw new RunwatchError("human_input", "waiting for human input was aborted");
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new RunwatchError("human_input", `no human input for run ${sdkRunId} within ${options.timeoutMs} ms`);
      const wait = Math.max(1, Math.min(30, Math.floor(remaining / 1000)));
      const started = Date.now();
      let retryIn: number | undefined;
      try {
        const answer = await this.getHumanInput(sdkRunId, wait, options.signal);
        if (answer) return answer;
        failures = 0;
        // A server that answers 204 at once (no long-poll) must not be hammered.
        if (Date.now() - started < 500) retryIn = 1000;
      } catch (err) {
        if (err instanceof RunwatchError && err.code === "config") throw err;
        if (options.signal?.aborted) throw new RunwatchError("human_input", "waiting for human input was aborted");
        failures++;
        const exp = Math.min(30_000, 500 * 2 ** Math.min(10, failures - 1));
        retryIn = (err instanceof RunwatchError ? err.details.retryInMs : undefined) ?? Math.round(exp / 2 + Math.random() * (exp / 2));
        this.onErrorHook(
          new RunwatchError("human_input", `waiting for human input: ${(err as Error)?.message ?? String(err)}; retrying in ${retryIn} ms`, { cause: err }),
        );
      }
      if (retryIn !== undefined) await sleep(Math.min(retryIn, Math.max(0, deadline - Date.now())), options.signal);
    }
  }

  /**
   * The event's JSON, serialized once. Plain JSON.stringify is the fast path; values it cannot take (cycles,
   * bigint) go through safeStringify. Oversized events get their largest fields cut (input/output/context...).
   */
  private serialize(event: { payload: Record<string, unknown> }): string {
    let json: string;
    try {
      json = JSON.stringify(event);
    } catch {
      json = safeStringify(event) ?? "null";
    }
    if (json.length <= this.maxEventBytes) return json;
    return safeStringify(this.shrink(event)) ?? "null";
  }

  private shrink<E extends { payload: Record<string, unknown> }>(event: E): E {
    const budget = Math.max(1000, Math.floor(this.maxEventBytes / 8));
    const payload: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(event.payload)) {
      const s = typeof v === "string" ? v : safeStringify(v);
      if (s === undefined || s.length <= budget) payload[k] = v;
      else if (typeof v === "string") payload[k] = truncate(v, budget);
      else payload[k] = { truncated: true, original_chars: s.length, preview: truncate(s, budget) };
    }
    return { ...event, payload };
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

let defaultClient: Runwatch | undefined;

/** A process-wide client configured from RUNWATCH_API_KEY / RUNWATCH_BASE_URL, created on first use. */
export function getDefaultClient(): Runwatch {
  if (!defaultClient) {
    defaultClient = new Runwatch();
    // The caller opted in (e.g. added the LangChain handler) but nothing will be sent: say so once.
    if (!defaultClient.enabled) console.warn("[runwatch] RUNWATCH_API_KEY is not set; runs are not reported");
  }
  return defaultClient;
}

/**
 * Scores (docs/API.md, Scores): POST /api/scores, a judgement of a run or one of its spans (user feedback, an
 * evaluation). The run's queued events are flushed first (the server scores only runs it has stored); a 404 while it
 * stores the run, a 429 and a 5xx are retried until the timeout. Unlike events, a refused score rejects the promise.
 */
import { retryAfterMs } from "./batching.js";
import { RunwatchError } from "./errors.js";

export type ScoreValue = number | boolean | string;
export type ScoreSource = "api" | "human" | "llm_judge" | "otel";

export interface ScoreOptions {
  comment?: string;
  /** The span of the run the score is about. */
  spanId?: string;
  /** Default "api". */
  source?: ScoreSource;
  /** How long to keep trying while the server has not stored the run yet; default 10 s. */
  timeoutMs?: number;
}

/** What posting a score needs from the client. */
export interface ScoreHost {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly fetchImpl: typeof fetch;
  flush(timeoutMs?: number): Promise<boolean>;
}

/** Stores a score; resolves to its score_id. Rejects with a RunwatchError ("http": refused or not stored in time; "config": the key). */
export async function postScore(host: ScoreHost, sdkRunId: string, name: string, value: ScoreValue, options: ScoreOptions = {}): Promise<string> {
  if (!host.apiKey) throw new RunwatchError("config", "Runwatch is disabled (no API key); cannot send a score");
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  const body = JSON.stringify({
    sdk_run_id: sdkRunId, name, value,
    ...(options.comment !== undefined ? { comment: options.comment } : {}),
    ...(options.spanId !== undefined ? { span_id: options.spanId } : {}),
    ...(options.source !== undefined ? { source: options.source } : {}),
  });
  await host.flush(timeoutMs);
  const url = `${host.baseUrl}/api/scores`;
  for (let failures = 1; ; failures++) {
    let why: string;
    let retryIn: number | undefined;
    try {
      const res = await host.fetchImpl(url, { method: "POST", headers: { authorization: `Bearer ${host.apiKey}`, "content-type": "application/json" }, body, signal: AbortSignal.timeout(10_000) });
      const text = await res.text();
      if (res.status === 201) return String((JSON.parse(text) as { score_id?: unknown }).score_id ?? "");
      if (res.status === 401 || res.status === 403) throw new RunwatchError("config", `POST ${url} answered ${res.status}: the key was refused`, { status: res.status, body: text });
      if (res.status !== 404 && res.status !== 429 && res.status < 500) throw new RunwatchError("http", `the score was refused (HTTP ${res.status}): ${text.slice(0, 300)}`, { status: res.status, body: text });
      why = `HTTP ${res.status}`;
      retryIn = retryAfterMs(res.headers.get("retry-after"));
    } catch (err) {
      if (err instanceof RunwatchError) throw err;
      why = (err as Error)?.message ?? String(err);
    }
    const left = deadline - Date.now();
    if (left <= 0) throw new RunwatchError("http", `could not score run ${sdkRunId} within ${timeoutMs} ms (${why})`);
    await new Promise((r) => setTimeout(r, Math.min(left, retryIn ?? Math.min(2_000, 100 * 2 ** Math.min(failures, 5)))));
  }
}

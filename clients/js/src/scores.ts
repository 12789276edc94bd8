/**
 * Scores (docs/API.md, Scores): POST /api/scores, a judgement of a run or one of its spans (user feedback, an
 * evaluation). The run's queued events are flushed first (the server scores only runs it has stored); a 404 while it
 * stores the run, a 429 and a 5xx are retried until the timeout. Unlike events, a refused score rejects the promise.
 */
import { retryAfterMs } from "./batching.js";
import { RunwatchError } from "./errors.js";
import { call } from "./api-call.js";

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

/** One score of a batch (postScores). */
export interface BatchScore {
  sdkRunId: string;
  name: string;
  value: ScoreValue;
  comment?: string;
  spanId?: string;
  source?: ScoreSource;
}

const BATCH = 1_000;

/**
 * Stores many scores with POST /api/scores/batch, a thousand per request, after flushing the runs' events; a score
 * whose run the server has not stored yet is sent again until `timeoutMs`. Resolves to the scores refused (by their
 * index in `scores`, with the server's reason); rejects only when no request gets through.
 */
export async function postScores(host: ScoreHost & { fetchImpl: typeof fetch }, scores: readonly BatchScore[], timeoutMs = 60_000): Promise<{ index: number; message: string }[]> {
  if (scores.length === 0) return [];
  await host.flush(timeoutMs);
  const deadline = Date.now() + timeoutMs;
  const refused: { index: number; message: string }[] = [];
  let pending = scores.map((score, index) => ({ score, index }));
  while (pending.length > 0) {
    const chunk = pending.slice(0, BATCH);
    const body = {
      scores: chunk.map(({ score: s }) => ({
        sdk_run_id: s.sdkRunId, name: s.name, value: s.value,
        ...(s.comment !== undefined ? { comment: s.comment } : {}), ...(s.spanId !== undefined ? { span_id: s.spanId } : {}), ...(s.source !== undefined ? { source: s.source } : {}),
      })),
    };
    const { results } = await call<{ results: { index: number; status: number; error?: { message?: string } }[] }>(host, "POST", "/api/scores/batch", body, 207);
    const again: typeof pending = [];
    for (const r of results) {
      const item = chunk[r.index]!;
      if (r.status === 201) continue;
      if (r.status === 404 && Date.now() < deadline) again.push(item);
      else refused.push({ index: item.index, message: r.error?.message ?? `HTTP ${r.status}` });
    }
    pending = [...again, ...pending.slice(BATCH)];
    if (again.length > 0 && again.length === chunk.length) await new Promise((r) => setTimeout(r, 250)); // the runs are still on their way
  }
  return refused;
}

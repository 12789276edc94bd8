/**
 * One call of the Runwatch API that a script waits for (datasets, experiments, scores, evaluators): a 429 or a 5xx is
 * retried a few times, honouring Retry-After; a refusal rejects with a RunwatchError carrying the server's message,
 * which names the field.
 */
import { retryAfterMs } from "./batching.js";
import { RunwatchError } from "./errors.js";

/** What the API calls need from the client. */
export interface ApiHost {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly fetchImpl: typeof fetch;
}

const ATTEMPTS = 4;

export async function call<T>(host: ApiHost, method: string, path: string, body?: unknown, expect = 200): Promise<T> {
  if (!host.apiKey) throw new RunwatchError("config", `Runwatch is disabled (no API key); cannot call ${path}`);
  const url = `${host.baseUrl}${path}`;
  let why = "";
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    let pause = 200 * 2 ** attempt;
    try {
      const res = await host.fetchImpl(url, {
        method,
        headers: { authorization: `Bearer ${host.apiKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      });
      const text = await res.text();
      if (res.status === expect) return JSON.parse(text) as T;
      if (res.status !== 429 && res.status < 500) {
        let message = text.slice(0, 2_000);
        try {
          message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
        } catch { /* not JSON: the text as it came */ }
        const code = res.status === 401 || res.status === 403 ? "config" : "http";
        throw new RunwatchError(code, `${method} ${path} was refused (HTTP ${res.status}): ${message}`, { status: res.status, body: text });
      }
      why = `HTTP ${res.status}`;
      pause = retryAfterMs(res.headers.get("retry-after")) ?? pause;
    } catch (err) {
      if (err instanceof RunwatchError) throw err;
      why = (err as Error)?.message ?? String(err);
    }
    if (attempt < ATTEMPTS - 1) await new Promise((r) => setTimeout(r, Math.min(pause, 5_000)));
  }
  throw new RunwatchError("network", `${method} ${path} failed ${ATTEMPTS} times (${why})`);
}


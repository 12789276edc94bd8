/**
 * One provider HTTP call with the retry policy every provider shares:
 * - 429 and 5xx (incl. Anthropic's 529 "overloaded") and connection failures are retried with exponential
 *   backoff and full jitter; a Retry-After / retry-after-ms header from the provider is honoured instead.
 * - each attempt has its own timeout; a timeout is not retried (the caller's deadline is already spent) → 504.
 * - other 4xx are not retried: the provider rejected the request (bad key, unknown model) → 502 naming it.
 */
import { ServiceError } from "../errors.js";
import { TargetRefused } from "../../core/network/ssrf.js";

export interface RetryPolicy {
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly baseDelayMs: number;
  readonly maxBackoffMs: number;
  readonly maxRetryAfterMs: number;
}

export interface CallOptions {
  readonly provider: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: unknown;
  readonly policy: RetryPolicy;
  readonly fetch: typeof fetch;
  /** Aborts the whole call (e.g. the client went away). */
  readonly signal?: AbortSignal;
}

/** The message of an error body: OpenAI, Anthropic and Gemini all answer `{"error": {"message": …}}`. */
const errorMessage = (body: unknown): string | undefined =>
  (body as { error?: { message?: string } } | undefined)?.error?.message;

export interface CallResult {
  readonly body: unknown;
  readonly attempts: number;
}

const RETRYABLE = (status: number) => status === 429 || status >= 500;

/** Milliseconds the provider asked us to wait, from retry-after-ms (OpenAI) or Retry-After (seconds or HTTP date). */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const ms = headers.get("retry-after-ms");
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const ra = headers.get("retry-after");
  if (!ra) return undefined;
  if (/^\d+(\.\d+)?$/.test(ra.trim())) return Number(ra) * 1000;
  const date = Date.parse(ra);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const backoff = (attempt: number, p: RetryPolicy) =>
  Math.random() * Math.min(p.maxBackoffMs, p.baseDelayMs * 2 ** attempt);

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export async function postJson(o: CallOptions): Promise<CallResult> {
  const { policy: p } = o;
  for (let attempt = 0; ; attempt++) {
    const timeout = AbortSignal.timeout(p.timeoutMs);
    const signal = o.signal ? AbortSignal.any([o.signal, timeout]) : timeout;
    let res: Response;
    let body: unknown;
    try {
      res = await o.fetch(o.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json", ...o.headers },
        body: JSON.stringify(o.body),
        signal,
      });
      body = await readBody(res);
    } catch (e) {
      if (timeout.aborted) {
        throw new ServiceError({
          status: 504,
          code: "provider_timeout",
          message: `${o.provider} did not answer within ${p.timeoutMs} ms`,
        });
      }
      if (o.signal?.aborted) throw e;
      const refused = (e as { cause?: unknown }).cause ?? e;
      if (refused instanceof TargetRefused) {
        throw new ServiceError({ status: 422, code: "provider_url_refused", message: `${o.provider}: ${refused.message}` });
      }
      // Connection refused/reset, DNS failure: worth another try.
      if (attempt < p.maxRetries) {
        await sleep(backoff(attempt, p), o.signal);
        continue;
      }
      throw new ServiceError({
        status: 502,
        code: "provider_unreachable",
        message: `${o.provider} could not be reached: ${(e as Error).cause ? String((e as Error & { cause: unknown }).cause) : (e as Error).message}`,
      });
    }
    if (res.ok) return { body, attempts: attempt + 1 };

    const detail = errorMessage(body) ?? (typeof body === "string" ? body.slice(0, 300) : undefined);
    const described = `${o.provider} answered HTTP ${res.status}${detail ? `: ${detail}` : ""}`;
    if (!RETRYABLE(res.status)) {
      const auth = res.status === 401 || res.status === 403;
      throw new ServiceError({
        status: 502,
        code: auth ? "provider_auth_failed" : "provider_rejected_request",
        message: described,
      });
    }
    const asked = retryAfterMs(res.headers);
    if (attempt >= p.maxRetries || (asked !== undefined && asked > p.maxRetryAfterMs)) {
      const rateLimited = res.status === 429;
      throw new ServiceError({
        status: rateLimited ? 503 : 502,
        code: rateLimited ? "provider_rate_limited" : "provider_unavailable",
        message: `${described} (after ${attempt + 1} attempt${attempt ? "s" : ""})`,
        retryAfterSec: asked !== undefined ? Math.ceil(asked / 1000) : rateLimited ? 30 : undefined,
      });
    }
    await sleep(asked ?? backoff(attempt, p), o.signal);
  }
}

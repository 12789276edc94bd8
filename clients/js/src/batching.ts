/** What the transport (transport.ts) is configured with and works on: options, counters, queued items, limits. */
import type { RunwatchError } from "./errors.js";

export interface TransportOptions {
  baseUrl: string;
  apiKey: string;
  fetch?: typeof fetch;
  /** Events held in memory at most; beyond that new events are dropped (and reported). Default 10,000. */
  maxQueueSize?: number;
  /** Events per request, at most 1000 (the server's limit). Default 1000. */
  maxBatchSize?: number;
  /** Request body bytes per batch; the server accepts 1 MiB. Default 900 KiB. */
  maxBatchBytes?: number;
  /** How long an event may wait for companions before a batch is sent. Default 250 ms. */
  flushIntervalMs?: number;
  /** Per-request timeout. Default 15 s. */
  requestTimeoutMs?: number;
  /** First retry delay; doubles each consecutive failure, with full jitter. Default 500 ms. */
  backoffBaseMs?: number;
  /** Longest retry delay. Default 30 s. */
  backoffMaxMs?: number;
  /** Attempts per event for server errors (not counting "server unavailable" which retries forever). Default 8. */
  maxAttempts?: number;
  /** On beforeExit, how long to try delivering what is queued. Default 5 s. */
  exitFlushTimeoutMs?: number;
  onError?: (err: RunwatchError) => void;
}

export interface TransportStats {
  queued: number;
  sent: number;
  dropped: number;
  rejected: number;
  requests: number;
  failedRequests: number;
}

export interface Item {
  readonly seq: number;
  readonly json: string;
  readonly bytes: number;
  attempts: number;
}

export interface FlushWaiter {
  readonly target: number;
  readonly stopOnUnavailable: boolean;
  readonly resolve: (ok: boolean) => void;
}

export interface BatchResultItem {
  index?: number;
  status?: number;
  event_id?: string;
  error?: unknown;
}

export const MAX_BATCH = 1000;
const encoder = new TextEncoder();
export const RETRYABLE_ITEM = new Set([0, 408, 425, 429, 500, 502, 503, 504]);

export const byteLength = (s: string): number => {
  // Fast path: pure ASCII strings are the common case and need no encoding.
  // eslint-disable-next-line no-control-regex
  return /^[\x00-\x7f]*$/.test(s) ? s.length : encoder.encode(s).length;
};

/**
 * How long to wait before the next request (ms). Once half of the key's rate-limit window is spent
 * (`RateLimit-Limit`, `-Remaining`, `-Reset`, docs/API.md), the requests left are spread evenly over what is left of
 * it, so a busy client sends a little less often instead of spending the window and then waiting out a 429 (up to a
 * minute without sending). 0 before that, and without the headers.
 */
export function paceMs(headers: { get(name: string): string | null }): number {
  const header = (name: string) => Number(headers.get(name) ?? Number.NaN);
  const [limit, remaining, resetSeconds] = [header("ratelimit-limit"), header("ratelimit-remaining"), header("ratelimit-reset")];
  if (!(remaining >= 0) || !(resetSeconds > 0) || remaining * 2 > limit) return 0;
  return (resetSeconds * 1000) / (remaining + 1);
}

/** Retry-After as delay-seconds or an HTTP date, in ms; undefined when absent or unparseable. */
export function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const secs = Number(header.trim());
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/**
 * The one mapping from core/errors.ts (and transport-level problems) to HTTP.
 * Every error body is `{ "error": { "code", "message", "field"? } }`.
 */
import type { Context } from "koa";
import type { AppError, LineProblem } from "../core/errors.js";

export interface ErrorBody {
  readonly error: { readonly code: string; readonly message: string; readonly field?: string; readonly lines?: readonly LineProblem[] };
}

/** A transport-level failure (body too large, not JSON...) that has no core error type. */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

export interface HttpError {
  readonly status: number;
  readonly body: ErrorBody;
  readonly headers: Readonly<Record<string, string>>;
}

const errorBody = (code: string, message: string, field?: string): ErrorBody =>
  ({ error: field === undefined ? { code, message } : { code, message, field } });

/** Seconds for Retry-After / RateLimit-Reset: never 0 while the client must still wait. */
export const ceilSeconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

const UNAVAILABLE_RETRY_SECONDS = 5;

export function rateLimitHeaders(limit: number, remaining: number, resetMs: number): Record<string, string> {
  return {
    "RateLimit-Limit": String(limit),
    "RateLimit-Remaining": String(Math.max(0, remaining)),
    "RateLimit-Reset": String(ceilSeconds(resetMs)),
  };
}

const isAppError = (e: unknown): e is AppError =>
  typeof e === "object" && e !== null && "_tag" in e &&
  ["ValidationError", "AuthError", "RateLimited", "Unavailable", "NotFound", "Conflict"].includes((e as { _tag: string })._tag);

/** Which core error (core/errors.ts) a thrown value is, by its tag (a class may come from another thread); else undefined. */
export const appErrorTag = (e: unknown): AppError["_tag"] | undefined => (isAppError(e) ? e._tag : undefined);

/** Maps any thrown value to status, body and headers. Unknown errors become a 500 without internals. */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpProblem) {
    return { status: err.status, body: errorBody(err.code, err.message, err.field), headers: err.headers };
  }
  if (isAppError(err)) {
    switch (err._tag) {
      case "ValidationError":
        return {
          status: 422,
          body: err.lines ? { error: { ...errorBody("validation_error", err.message, err.field).error, lines: err.lines } } : errorBody("validation_error", err.message, err.field),
          headers: {},
        };
      case "AuthError": {
        const forbidden = err.code === "forbidden" || err.code === "insufficient_scope";
        return {
          status: forbidden ? 403 : 401,
          body: errorBody(err.code, err.message),
          headers: forbidden ? {} : { "WWW-Authenticate": 'Bearer realm="runwatch"' },
        };
      }
      case "RateLimited":
        return {
          status: 429,
          body: errorBody(
            "rate_limited",
            err.unit === "events"
              ? `quota of ${err.limit} events and spans per minute exceeded (RUNWATCH_EVENT_QUOTA_PER_MINUTE); retry in ${ceilSeconds(err.retryAfterMs)} s`
              : err.unit === "judge calls"
                ? `the project's judge calls per minute (${err.limit}, calls_per_minute) are used up; retry in ${ceilSeconds(err.retryAfterMs)} s`
                : `rate limit of ${err.limit} requests per minute exceeded; retry in ${ceilSeconds(err.retryAfterMs)} s`,
          ),
          headers: { "Retry-After": String(ceilSeconds(err.retryAfterMs)), ...rateLimitHeaders(err.limit, err.remaining, err.retryAfterMs) },
        };
      case "Unavailable":
        return {
          status: 503,
          body: errorBody("service_unavailable", `${err.service} is unavailable: ${err.message}; retry later`),
          headers: { "Retry-After": String(UNAVAILABLE_RETRY_SECONDS) },
        };
      case "NotFound":
        return { status: 404, body: errorBody("not_found", err.message), headers: {} };
      case "Conflict":
        return { status: 409, body: errorBody(err.code ?? "conflict", err.message, err.field), headers: {} };
    }
  }
  const status = (err as { status?: unknown })?.status;
  if (typeof status === "number" && status >= 400 && status < 500 && (err as { expose?: boolean }).expose) {
    // http-errors thrown by Koa or its middleware (ctx.throw); their messages are meant for clients.
    return { status, body: errorBody(`http_${status}`, (err as Error).message), headers: {} };
  }
  return { status: 500, body: errorBody("internal_error", "an unexpected error occurred; it has been logged"), headers: {} };
}

/** The status an error answers with: the table above, for pages that show an error their own way. */
export const statusOf = (err: unknown): number => toHttpError(err).status;

/** Writes an error response on a Koa context. */
export function sendError(ctx: Context, err: unknown): HttpError {
  const e = toHttpError(err);
  ctx.status = e.status;
  for (const [k, v] of Object.entries(e.headers)) ctx.set(k, v);
  ctx.body = e.body;
  return e;
}

/**
 * Typed errors shared by every component. web maps them to HTTP status codes in one place
 * (web/http-errors.ts); the body is always `{ error: { code, message, field? } }`.
 */
import { Data } from "effect";

/** The request body does not match the contract; `field` is the JSON path, e.g. "payload.phase". */
/** One bad line of an uploaded file (a dataset import): its 1-based line number and what is wrong there. */
export interface LineProblem {
  readonly line: number;
  readonly field?: string;
  readonly message: string;
}

export class ValidationError extends Data.TaggedError("ValidationError")<{
  readonly message: string;
  readonly field?: string;
  /** For an uploaded file: every bad line found (the answer lists them). */
  readonly lines?: readonly LineProblem[];
}> {}

export class AuthError extends Data.TaggedError("AuthError")<{
  readonly code: "missing_api_key" | "invalid_api_key" | "expired_api_key" | "unauthenticated" | "forbidden" | "insufficient_scope";
  readonly message: string;
}> {}

export class RateLimited extends Data.TaggedError("RateLimited")<{
  readonly limit: number;
  /** What the limit counts per minute; default requests. */
  readonly unit?: "requests" | "events" | "judge calls";
  readonly remaining: number;
  /** Milliseconds until a token is available again. */
  readonly retryAfterMs: number;
}> {}

/** A dependency (log, store, limiter) is down; the client should retry. Maps to 503 + Retry-After. */
export class Unavailable extends Data.TaggedError("Unavailable")<{
  readonly service: string;
  readonly message: string;
  readonly cause?: unknown;
}> {}

export class NotFound extends Data.TaggedError("NotFound")<{
  readonly resource: string;
  readonly message: string;
}> {}

export class Conflict extends Data.TaggedError("Conflict")<{
  /** Machine-readable reason for clients, e.g. "agent_exists"; "conflict" when absent. */
  readonly code?: string;
  readonly message: string;
  readonly field?: string;
}> {}

export type AppError = ValidationError | AuthError | RateLimited | Unavailable | NotFound | Conflict;

const TAGGED = { ValidationError, AuthError, RateLimited, Unavailable, NotFound, Conflict } as const;

/**
 * Rebuilds a tagged error from its tag and fields after it crossed a thread (core/threads/rpc.ts): a core error
 * becomes its own class again (so `_tag` checks and HTTP mapping still work); another tag, an Error that carries it.
 */
export function reviveTaggedError(tag: string, fields: Record<string, unknown>): Error {
  const Known = (TAGGED as Record<string, new (args: any) => Error>)[tag];
  if (Known) return new Known(fields);
  const err = new Error(typeof fields.message === "string" ? fields.message : tag);
  Object.assign(err, fields, { _tag: tag, name: tag });
  return err;
}

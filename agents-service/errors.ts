/**
 * Errors of the agents service, each with its HTTP mapping. The body is always
 * `{ error: { code, message, field? } }` (the shared API error shape).
 */
import { Data } from "effect";

export class ServiceError extends Data.TaggedError("ServiceError")<{
  readonly status: number;
  readonly code: string;
  readonly message: string;
  readonly field?: string;
  /** Seconds, sent as Retry-After (429/503). */
  readonly retryAfterSec?: number;
  /** What the model answered, when the answer was unusable (POST /judge returns it: the playground shows it). */
  readonly rawAnswer?: string;
}> {}

export const badRequest = (code: string, message: string, field?: string) =>
  new ServiceError({ status: 400, code, message, field });

/** The provider answered, but not with a valid improvement (bad JSON, wrong shape, refusal, truncation). */
export const malformedAnswer = (provider: string, message: string, rawAnswer?: string) =>
  new ServiceError({ status: 502, code: "malformed_model_answer", message: `${provider}: ${message}`, ...(rawAnswer !== undefined ? { rawAnswer } : {}) });

export const errorBody = (e: ServiceError) => ({
  error: { code: e.code, message: e.message, ...(e.field ? { field: e.field } : {}), ...(e.rawAnswer !== undefined ? { raw_answer: e.rawAnswer } : {}) },
});

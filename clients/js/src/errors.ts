/**
 * The client's error type (what onError receives; never thrown into agent code by the transport) and how
 * failures are put into words.
 */

export type RunwatchErrorCode =
  | "network" // the server could not be reached (retried)
  | "http" // the server answered with an error status for the whole request
  | "rejected" // the server rejected individual events (not retried)
  | "dropped" // events given up on (queue full, max attempts, client closed)
  | "config" // misconfiguration (e.g. no API key)
  | "invalid" // a value given to the client was cut to the server's bounds or left out (tags, metadata…)
  | "human_input"; // waiting for a human answer failed

/** What onError receives. Never thrown into agent code by the transport. */
export class RunwatchError extends Error {
  override readonly name = "RunwatchError";
  constructor(
    readonly code: RunwatchErrorCode,
    message: string,
    readonly details: { status?: number; count?: number; body?: unknown; cause?: unknown; retryInMs?: number } = {},
  ) {
    super(message);
  }
}

/** A network failure in words (a timeout, a refused connection). */
export function describe(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === "AbortError") return "request timed out";
  const cause = e?.cause?.code ?? e?.cause?.message;
  return [e?.message ?? String(err), cause].filter(Boolean).join(": ");
}

/** The server's `{ error: { code, message, field } }` body in words. */
export function errorMessage(body: unknown): string {
  const e = (body as { error?: { message?: string; code?: string; field?: string } } | undefined)?.error;
  if (!e) return "no error body";
  return [e.code, e.message, e.field ? `(field ${e.field})` : undefined].filter(Boolean).join(" ");
}

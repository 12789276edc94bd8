/** The one error → HTTP table (web/http-errors.ts): every core error's status, body and headers, pinned. */
import { describe, expect, it } from "vitest";
import { AuthError, Conflict, NotFound, RateLimited, Unavailable, ValidationError, reviveTaggedError } from "../core/errors.js";
import { appErrorTag, HttpProblem, statusOf, toHttpError } from "./http-errors.js";

describe("toHttpError", () => {
  it("maps each core error to its status, code and message", () => {
    const table: Array<[unknown, number, Record<string, unknown>]> = [
      [new ValidationError({ message: "name is required", field: "name" }), 422, { code: "validation_error", message: "name is required", field: "name" }],
      [new ValidationError({ message: "bad body" }), 422, { code: "validation_error", message: "bad body" }],
      [new Conflict({ message: "exists", field: "name", code: "agent_exists" }), 409, { code: "agent_exists", message: "exists", field: "name" }],
      [new Conflict({ message: "taken" }), 409, { code: "conflict", message: "taken" }],
      [new NotFound({ resource: "run", message: "no such run" }), 404, { code: "not_found", message: "no such run" }],
      [new AuthError({ code: "forbidden", message: "not yours" }), 403, { code: "forbidden", message: "not yours" }],
      [new AuthError({ code: "insufficient_scope", message: "read only" }), 403, { code: "insufficient_scope", message: "read only" }],
      [new AuthError({ code: "invalid_api_key", message: "unknown key" }), 401, { code: "invalid_api_key", message: "unknown key" }],
      [new AuthError({ code: "unauthenticated", message: "log in first" }), 401, { code: "unauthenticated", message: "log in first" }],
      [new Unavailable({ service: "postgres", message: "down" }), 503, { code: "service_unavailable", message: "postgres is unavailable: down; retry later" }],
      [new HttpProblem(413, "payload_too_large", "too big", "body"), 413, { code: "payload_too_large", message: "too big", field: "body" }],
    ];
    for (const [err, status, error] of table) {
      expect(toHttpError(err), String((err as Error).message)).toMatchObject({ status, body: { error } });
      expect(toHttpError(err).body.error).toEqual(error);
      expect(statusOf(err)).toBe(status);
    }
  });

  it("says how long to wait on 429 and 503, and asks for credentials only on 401", () => {
    expect(toHttpError(new RateLimited({ limit: 60, remaining: 0, retryAfterMs: 1_500 }))).toEqual({
      status: 429,
      body: { error: { code: "rate_limited", message: "rate limit of 60 requests per minute exceeded; retry in 2 s" } },
      headers: { "Retry-After": "2", "RateLimit-Limit": "60", "RateLimit-Remaining": "0", "RateLimit-Reset": "2" },
    });
    expect(toHttpError(new RateLimited({ limit: 5, unit: "judge calls", remaining: 0, retryAfterMs: 30_000 })).body.error.message)
      .toBe("the project's judge calls per minute (5, calls_per_minute) are used up; retry in 30 s");
    expect(toHttpError(new Unavailable({ service: "redis", message: "down" })).headers).toEqual({ "Retry-After": "5" });
    expect(toHttpError(new AuthError({ code: "expired_api_key", message: "expired" })).headers).toEqual({ "WWW-Authenticate": 'Bearer realm="runwatch"' });
    expect(toHttpError(new AuthError({ code: "forbidden", message: "no" })).headers).toEqual({});
  });

  it("keeps an upload's bad lines in the body", () => {
    const lines = [{ line: 3, field: "input", message: "input is required" }];
    expect(toHttpError(new ValidationError({ message: "2 lines are bad", lines })).body).toEqual({ error: { code: "validation_error", message: "2 lines are bad", lines } });
  });

  it("knows an error that crossed a thread by its tag; anything unknown is a 500 without internals", () => {
    const revived = reviveTaggedError("Conflict", { message: "exists", field: "name" });
    expect(appErrorTag(revived)).toBe("Conflict");
    expect(statusOf(revived)).toBe(409);
    expect(appErrorTag(new Error("boom"))).toBeUndefined();
    expect(toHttpError(new Error("secret detail"))).toEqual({
      status: 500, body: { error: { code: "internal_error", message: "an unexpected error occurred; it has been logged" } }, headers: {},
    });
    // Koa's http-errors with a client-facing message keep their status; without `expose` they are a 500.
    expect(toHttpError(Object.assign(new Error("bad header"), { status: 400, expose: true })).body.error).toEqual({ code: "http_400", message: "bad header" });
    expect(statusOf(Object.assign(new Error("hidden"), { status: 400 }))).toBe(500);
  });
});

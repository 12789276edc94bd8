/** The server a fuzz suite hammers, with its vitest hooks. */
import { afterAll, beforeAll } from "vitest";
import { startTestServer, type TestServer } from "./harness.js";

export interface FuzzTarget {
  readonly srv: TestServer;
  readonly userId: number;
  readonly key: string;
}

/**
 * Starts the server before the suite's tests (the pipeline on, no rate limit in the way, one user and its key) and
 * closes it after them; read the fields inside a test, once beforeAll has filled them in.
 */
export function useFuzzTarget(): FuzzTarget {
  const target = {} as { srv: TestServer; userId: number; key: string };
  beforeAll(async () => {
    // OTLP exports logged whole (the default, said here because the fuzz relies on it): the fuzz reaches the
    // pipeline's mapping; otlp-protocol.test.ts sees the receiver's.
    target.srv = await startTestServer({ pipeline: true, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000", RUNWATCH_OTLP_MAPPING: "pipeline" }, pipelineOptions: { maxWaitMs: 5 } });
    target.userId = (await target.srv.user()).id;
    target.key = await target.srv.key(target.userId);
  });
  afterAll(() => target.srv?.close());
  return target;
}

/**
 * Self-reporting: each /improve becomes one Runwatch run (run_start, a step per stage, run_end with tokens and
 * cost, or error). RunTrace is the seam improve.ts talks to; without RUNWATCH_API_KEY/RUNWATCH_BASE_URL the
 * no-op trace is used.
 */
export interface RunTrace {
  /** Runs one stage, timing it; `output` is what the step event carries. */
  step<T>(name: string, fn: () => Promise<{ result: T; output: Record<string, unknown> }>): Promise<T>;
}

export interface RunTracer {
  /** `runId` becomes the run's sdk_run_id (the request id the service returns as X-Request-Id). */
  begin(input: Record<string, unknown>, runId: string): RunTrace & {
    end(output: Record<string, unknown>, usage: { model: string; prompt_tokens: number; completion_tokens: number; cost_usd: number | null }): Promise<void>;
    fail(error: unknown): Promise<void>;
  };
  /** Delivers what is queued and stops (on service shutdown). */
  close?(): Promise<void>;
}

export const noopTracer: RunTracer = {
  begin: () => ({
    step: async (_name, fn) => (await fn()).result,
    end: async () => {},
    fail: async () => {},
  }),
};

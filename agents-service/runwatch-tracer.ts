/**
 * Self-reporting through the Runwatch JS client (clients/js, package "runwatch"): one run per /improve with
 * agent name "agents-service": run_start (request summary, never the code itself), a step per stage
 * (detect_language, llm_<provider>) with duration and output, then run_end with tokens and cost, or an
 * error event. The client batches in the background and never throws into the request path.
 */
import type { Logger } from "../core/logger.js";
import type { RunTracer } from "./report.js";
import type { Runwatch as RunwatchClient } from "../clients/js/src/index.js";

export const AGENT_NAME = "agents-service";

/** The built package when present (npm workspace "runwatch"), else its TypeScript source (tsx runs it). */
async function loadClient(): Promise<typeof RunwatchClient> {
  const pkg = "runwatch";
  try {
    return ((await import(pkg)) as { Runwatch: typeof RunwatchClient }).Runwatch;
  } catch {
    return (await import("../clients/js/src/index.js")).Runwatch;
  }
}

export async function runwatchTracer(
  cfg: { apiKey: string; baseUrl: string },
  logger: Logger,
  extra: { fetch?: typeof fetch; flushIntervalMs?: number } = {},
): Promise<RunTracer> {
  const Runwatch = await loadClient();
  const client = new Runwatch({
    apiKey: cfg.apiKey,
    baseUrl: cfg.baseUrl,
    ...(extra.fetch ? { fetch: extra.fetch } : {}),
    ...(extra.flushIntervalMs !== undefined ? { flushIntervalMs: extra.flushIntervalMs } : {}),
    onError: (err) => logger.warn("runwatch self-report failed", { err: err.message }),
  });
  logger.info("reporting /improve runs to Runwatch", { base_url: cfg.baseUrl });
  return {
    begin(input, runId) {
      const run = client.startRun({ agentName: AGENT_NAME, framework: "runwatch-agents", input, sdkRunId: runId });
      return {
        async step(name, fn) {
          const t0 = performance.now();
          run.stepStart(name);
          try {
            const { result, output } = await fn();
            run.stepEnd(name, { durationMs: performance.now() - t0, output });
            return result;
          } catch (err) {
            run.stepEnd(name, { durationMs: performance.now() - t0, error: err });
            throw err;
          }
        },
        async end(output, usage) {
          run.setUsage({
            promptTokens: usage.prompt_tokens,
            completionTokens: usage.completion_tokens,
            model: usage.model,
            ...(usage.cost_usd !== null ? { costUsd: usage.cost_usd } : {}),
          });
          run.end(output);
        },
        async fail(error) {
          run.fail(error);
        },
      };
    },
    async close() {
      await client.shutdown(5_000);
    },
  };
}

/**
 * The background workers', notifications' and agents-service's settings read their numbers through one helper
 * (core/env-number.ts): 0 where it means "off", a clear error naming the variable for a value that is not a number
 * they can work with.
 */
import { describe, expect, it } from "vitest";
import { loadEvaluationWorkerSettings } from "../evaluation/jobs/worker.js";
import { loadPromptExperimentSettings } from "../web/prompts/experiment-worker.js";
import { loadNotificationSettings } from "../alerts/settings.js";
import { loadAgentsSettings } from "../agents-service/settings.js";

describe("the settings that read numbers from the environment", () => {
  it("evaluation worker: 0 jobs at once leaves it out; a bad or zero interval is refused, naming the variable", () => {
    expect(loadEvaluationWorkerSettings({})).toEqual({ concurrency: 8, pollMs: 1_000, leaseSeconds: 300, backoffMs: 5_000, maxBackoffMs: 600_000 });
    expect(loadEvaluationWorkerSettings({ RUNWATCH_EVALUATION_CONCURRENCY: "0", RUNWATCH_EVALUATION_POLL_MS: "100" })).toMatchObject({ concurrency: 0, pollMs: 100 });
    expect(() => loadEvaluationWorkerSettings({ RUNWATCH_EVALUATION_CONCURRENCY: "eight" })).toThrow(/^RUNWATCH_EVALUATION_CONCURRENCY must be a whole number of at least 0/);
    expect(() => loadEvaluationWorkerSettings({ RUNWATCH_EVALUATION_POLL_MS: "0" })).toThrow(/^RUNWATCH_EVALUATION_POLL_MS must be a whole number of at least 1/);
    expect(() => loadEvaluationWorkerSettings({ RUNWATCH_EVALUATION_LEASE_S: "1.5" })).toThrow(/^RUNWATCH_EVALUATION_LEASE_S/);
  });

  it("prompt experiments: 0 jobs leaves the worker out; a bad value is refused, naming the variable", () => {
    expect(loadPromptExperimentSettings({})).toEqual({ jobs: 2, itemConcurrency: 4, pollMs: 2_000, leaseSeconds: 120 });
    expect(loadPromptExperimentSettings({ RUNWATCH_PROMPT_EXPERIMENT_JOBS: "0" }).jobs).toBe(0);
    expect(() => loadPromptExperimentSettings({ RUNWATCH_PROMPT_EXPERIMENT_JOBS: "-1" })).toThrow(/^RUNWATCH_PROMPT_EXPERIMENT_JOBS must be/);
    expect(() => loadPromptExperimentSettings({ RUNWATCH_PROMPT_EXPERIMENT_CONCURRENCY: "0" })).toThrow(/^RUNWATCH_PROMPT_EXPERIMENT_CONCURRENCY must be/);
    expect(() => loadPromptExperimentSettings({ RUNWATCH_PROMPT_EXPERIMENT_POLL_MS: "2s" })).toThrow(/^RUNWATCH_PROMPT_EXPERIMENT_POLL_MS must be/);
  });

  it("notifications and agents-service settings name the variable of a bad number", () => {
    expect(() => loadNotificationSettings({ RUNWATCH_NOTIFY_POLL_MS: "-5" })).toThrow(/^RUNWATCH_NOTIFY_POLL_MS must be a number of at least 0/);
    expect(() => loadAgentsSettings({ AGENTS_MAX_CONCURRENT: "many" })).toThrow(/^AGENTS_MAX_CONCURRENT must be a number of at least 0/);
  });
});

/**
 * Every background job a Runwatch process runs, in one list (core/jobs.ts has the interface and the lifecycle). They
 * run beside each pipeline (deploy/roles.ts), started in this order and stopped in reverse:
 *
 *   notifications   alert notification delivery (alerts/delivery/worker.ts; RUNWATCH_NOTIFY_POLL_MS, …)
 *   evaluation      online evaluation jobs, judged through agents-service (evaluation/jobs/worker.ts);
 *                   RUNWATCH_EVALUATION_CONCURRENCY=0 leaves it out of this process
 *   prompt-experiments  a prompt page's "Run experiment": datasets run through prompt versions (web/prompts/experiment-worker.ts);
 *                   RUNWATCH_PROMPT_EXPERIMENT_JOBS=0 leaves it out
 *   retention       users' data retention, every RUNWATCH_RETENTION_SWEEP_MS (pipeline/retention-sweeper.ts); 0 leaves it out
 *
 * Each reports its counters on GET /metrics as runwatch_job_…{job="<name>"} (docs/PIPELINE.md, "Counters").
 */
import { startNotificationWorker } from "../alerts/index.js";
import type { Config } from "../core/config.js";
import { backgroundJob, startJobs, type BackgroundJob, type RunningJobs } from "../core/jobs.js";
import type { Logger } from "../core/logger.js";
import type { Ports } from "../core/runtime.js";
import { loadEvaluationWorkerSettings, startEvaluationWorker } from "../evaluation/index.js";
import { startRetentionSweeper } from "../pipeline/retention-sweeper.js";
import { loadPromptExperimentSettings, startPromptExperimentWorker } from "../web/prompts/experiment-worker.js";

type JobPorts = Pick<Ports, "sql" | "clickhouse" | "log" | "limiter" | "pubsub" | "config">;

/** The jobs a pipeline process runs, in start order (`env`: whether the evaluation worker runs, as it reads it). */
export function backgroundJobs(ports: JobPorts, config: Config, logger: Logger, env: NodeJS.ProcessEnv = process.env): BackgroundJob[] {
  const evaluation = loadEvaluationWorkerSettings(env);
  const jobs = [
    backgroundJob("notifications", (counters) => startNotificationWorker({ sql: ports.sql, pubsub: ports.pubsub, logger, counters })),
  ];
  if (evaluation.concurrency > 0) {
    jobs.push(backgroundJob("evaluation", (counters) => startEvaluationWorker(ports, config, logger, { settings: evaluation, counters })));
  }
  const promptExperiments = loadPromptExperimentSettings(env);
  if (promptExperiments.jobs > 0) {
    jobs.push(backgroundJob("prompt-experiments", (counters) => startPromptExperimentWorker(ports, config, logger, { settings: promptExperiments, counters })));
  }
  if (config.retentionSweepMs > 0) {
    jobs.push(backgroundJob("retention", async (counters) =>
      startRetentionSweeper({ sql: ports.sql, ch: ports.clickhouse }, config.retentionSweepMs, logger.child({ svc: "retention" }), counters)));
  }
  return jobs;
}

/** Starts this process's background jobs; stop() stops them in reverse. */
export function startBackgroundJobs(ports: JobPorts, config: Config, logger: Logger, env: NodeJS.ProcessEnv = process.env): Promise<RunningJobs> {
  return startJobs(backgroundJobs(ports, config, logger, env), { pubsub: ports.pubsub, logger });
}

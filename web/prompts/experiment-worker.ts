/**
 * The worker behind a prompt page's "Run experiment" (docs/PROMPTS.md, Experiments over prompt versions), one of a
 * process's background jobs (deploy/jobs.ts). It claims jobs (stores/prompt-experiment-jobs.ts: a lease, so workers
 * in several processes share them), runs each dataset item through the version, `itemConcurrency` at a time
 * (experiment-item.ts), appends each item's run to the event log as the ingest API would, renews the lease with each
 * item's progress, and completes the experiment. A job resumes where it was: handed back when its process stops (the
 * items under way finish first), or claimed again once its lease runs out when the process ended without stopping;
 * the items that already have a result are not run again.
 *
 * It lives beside the web's prompt routes because it joins two features (prompts' templates, evaluation's keyed and
 * capped completions), which features may not do themselves.
 */
import type { Config } from "../../core/config.js";
import { envNumber, type Env } from "../../core/env-number.js";
import { Conflict, AuthError, RateLimited } from "../../core/errors.js";
import type { JobCounters } from "../../core/jobs.js";
import { appendEvents } from "../../core/log/events.js";
import type { Logger } from "../../core/logger.js";
import { startPollingWorker } from "../../core/polling-worker.js";
import type { Ports } from "../../core/runtime.js";
import { resolveSessionSecret } from "../../core/secrets.js";
import { projectCompletion, type EvaluationDeps } from "../../evaluation/index.js";
import { readPrompt } from "../../prompts/index.js";
import { datasetNamed, readItems } from "../../stores/datasets/datasets.js";
import { experimentResults } from "../../stores/datasets/experiment-results.js";
import { completeExperiment, experimentWithId } from "../../stores/datasets/experiments.js";
import {
  claimPromptExperimentJobs, finishPromptExperimentJob, recordProgress, releasePromptExperimentJob, type PromptExperimentJob,
} from "../../stores/prompt-experiment-jobs.js";
import { createEventStore } from "../../stores/runs/event-store.js";
import { runItem, type ItemSubject } from "./experiment-item.js";

/** PubSub channel on which the API says a job was queued (the worker also polls). */
export const PROMPT_EXPERIMENTS_CHANNEL = "prompts.experiments";

export interface PromptExperimentSettings {
  /** Jobs run at once by this process; 0 leaves the worker out. */
  readonly jobs: number;
  /** Items of one job run at once. */
  readonly itemConcurrency: number;
  readonly pollMs: number;
  readonly leaseSeconds: number;
}

export function loadPromptExperimentSettings(env: Env = process.env): PromptExperimentSettings {
  const whole = (name: string, dflt: number, min: number) => envNumber(env, name, dflt, { min, whole: true });
  return {
    jobs: whole("RUNWATCH_PROMPT_EXPERIMENT_JOBS", 2, 0),
    itemConcurrency: whole("RUNWATCH_PROMPT_EXPERIMENT_CONCURRENCY", 4, 1),
    pollMs: whole("RUNWATCH_PROMPT_EXPERIMENT_POLL_MS", 2_000, 10),
    leaseSeconds: whole("RUNWATCH_PROMPT_EXPERIMENT_LEASE_S", 120, 1),
  };
}

type WorkerPorts = Pick<Ports, "sql" | "clickhouse" | "log" | "limiter" | "pubsub" | "config">;

export interface PromptExperimentWorker {
  drain(): Promise<number>;
  close(): Promise<void>;
}

/** Longest wait for the project's calls per minute to allow the next item. */
const MAX_RATE_WAIT_MS = 60_000;

export async function startPromptExperimentWorker(
  ports: WorkerPorts, config: Config, logger: Logger,
  opts: { settings?: PromptExperimentSettings; counters?: JobCounters; projects?: () => readonly number[] } = {},
): Promise<PromptExperimentWorker> {
  const settings = opts.settings ?? loadPromptExperimentSettings();
  const log = logger.child({ component: "prompt-experiments" });
  const deps: EvaluationDeps = {
    ports: ports as Ports, events: createEventStore(ports.clickhouse), logger: log, sessionSecret: await resolveSessionSecret(config),
  };
  let stopped = () => false;

  async function runJob(job: PromptExperimentJob): Promise<void> {
    const { sql, clickhouse } = ports;
    const projectId = job.project_id;
    const experiment = await experimentWithId(sql, projectId, job.experiment_id);
    const version = await readPrompt(sql, projectId, job.prompt_name, { version: job.prompt_version });
    const subject: ItemSubject = { experimentId: experiment.id, promptName: job.prompt_name, version: version.version, prompt: version.prompt, config: version.config };
    // Resuming: what already has a result stays (a run not stored yet is made again, and the newer one counts).
    const results = await experimentResults(clickhouse, projectId, experiment.id);
    const have = new Set(results.map((r) => `${r.item_id}\u0000${r.repetition}`));
    let done = results.length;
    let failed = results.filter((r) => r.status === "error").length;
    const dataset = await datasetNamed(sql, projectId, experiment.dataset);
    const work: { id: string; input: unknown; repetition: number }[] = [];
    for (let after: string | undefined, more = true; more;) {
      const page = await readItems(sql, dataset, { version: experiment.dataset_version, limit: 1_000, status: "active", ...(after ? { after } : {}) });
      for (const item of page.items) {
        for (let repetition = 1; repetition <= experiment.repetitions; repetition++) {
          if (!have.has(`${item.id}\u0000${repetition}`)) work.push({ id: item.id, input: item.input, repetition });
        }
      }
      after = page.next_after ?? undefined;
      more = page.next_after !== null;
    }
    const complete = projectCompletion(deps, projectId);
    const sender = { projectId, userId: job.created_by ?? 0 };
    let halt: { status: "stopped" | "failed"; message: string } | undefined;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (!halt && !stopped() && next < work.length) {
        const w = work[next++]!;
        for (let waited = 0; ;) {
          try {
            const r = await runItem(subject, w, w.repetition, complete, sender);
            await appendEvents(ports.log, r.events);
            done++;
            if (r.failed) failed++;
            await recordProgress(sql, job.experiment_id, { done, failed }, settings.leaseSeconds);
            break;
          } catch (err) {
            if (err instanceof RateLimited && waited < MAX_RATE_WAIT_MS) {
              const ms = Math.min(Math.max(err.retryAfterMs ?? 1_000, 100), MAX_RATE_WAIT_MS);
              waited += ms;
              await new Promise((r) => setTimeout(r, ms));
              continue;
            }
            halt ??= haltOf(err);
            return;
          }
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(settings.itemConcurrency, Math.max(1, work.length)) }, worker));
    if (stopped() && !halt && next < work.length) {
      // The process is stopping: hand the job back for a worker (here after a restart, or elsewhere) to resume.
      await releasePromptExperimentJob(sql, job.experiment_id);
      return;
    }
    await completeExperiment(sql, projectId, experiment.id);
    await finishPromptExperimentJob(sql, job.experiment_id, halt?.status ?? "completed", halt?.message ?? "");
  }

  const worker = await startPollingWorker({
    pubsub: ports.pubsub, channel: PROMPT_EXPERIMENTS_CHANNEL, pollMs: settings.pollMs, counters: opts.counters,
    onError: (err) => log.error("prompt experiments: claiming jobs failed", { err }),
    pass: async (isStopped) => {
      stopped = isStopped;
      let total = 0;
      while (!isStopped()) {
        const jobs = await claimPromptExperimentJobs(ports.sql, settings.jobs, settings.leaseSeconds, opts.projects?.());
        if (jobs.length === 0) break;
        total += jobs.length;
        await Promise.all(jobs.map((job) => runJob(job).catch(async (err) => {
          if (opts.counters) opts.counters.failures++;
          log.error("prompt experiment failed", { experiment_id: job.experiment_id, err });
          await finishPromptExperimentJob(ports.sql, job.experiment_id, "failed", `the experiment could not go on: ${err instanceof Error ? err.message : String(err)}`).catch(() => {});
        })));
      }
      return total;
    },
  });
  return { drain: worker.drain, close: worker.close };
}

/** What ends a job early, said for the page: the budget (stopped), a key the project may not use (failed). */
function haltOf(err: unknown): { status: "stopped" | "failed"; message: string } {
  if (err instanceof Conflict) return { status: "stopped", message: `stopped: ${err.message}` };
  if (err instanceof AuthError) return { status: "failed", message: err.message };
  if (err instanceof RateLimited) return { status: "stopped", message: "stopped: the project's judge calls per minute stayed used up for a minute" };
  return { status: "failed", message: `the experiment could not go on: ${err instanceof Error ? err.message : String(err)}` };
}

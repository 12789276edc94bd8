/**
 * The evaluation worker (docs/EVALUATION.md, Online rules): beside each pipeline, it claims due evaluation jobs
 * (stores/evaluation/jobs.ts: FOR UPDATE SKIP LOCKED and a lease, so any number of workers in any number of
 * processes share the queue) and runs each (evaluation/jobs/evaluate-job.ts), up to `concurrency` at a time.
 * Idle, it polls every pollMs and wakes at once when the pipeline announces new jobs on PubSub "evaluation.jobs"
 * (core/polling-worker.ts).
 * LLM judges are asked through agents-service's POST /judge (config.agentsUrl, the agent secret).
 */
import type { Config } from "../../core/config.js";
import { callJudge } from "../../core/agents/client.js";
import { serviceDefaults } from "../../core/agents/judge-estimate.js";
import { resolveSessionSecret } from "../../core/secrets.js";
import { providerKeySealer } from "../../stores/evaluation/provider-keys.js";
import { resolveAgentSecret } from "../../core/agents/secret.js";
import { insertScoreRows } from "../../stores/scores.js";
import { createEventStore } from "../../stores/runs/event-store.js";
import { startPollingWorker } from "../../core/polling-worker.js";
import type { JobCounters } from "../../core/jobs.js";
import type { Logger } from "../../core/logger.js";
import type { Ports } from "../../core/runtime.js";
import type { JudgeCall } from "../judging/evaluate.js";
import { jobCache, runJob } from "./evaluate-job.js";
import { batchedWrites } from "./batched-writes.js";
import { appendEvents } from "../../core/log/events.js";
import type { LoggedEvent } from "../../core/events/schema.js";
import { envNumber, type Env } from "../../core/env-number.js";
import { claimJobs, evaluationBacklog } from "../../stores/evaluation/jobs.js";
import { EVALUATION_JOBS_CHANNEL } from "../channels.js";

export interface EvaluationWorkerSettings {
  /** Jobs run at once; 0 turns this process's worker off (run workers in other processes). */
  readonly concurrency: number;
  readonly pollMs: number;
  /** A claimed job is another worker's to take after this long (a judge call with its retries fits well inside). */
  readonly leaseSeconds: number;
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
}

export function loadEvaluationWorkerSettings(env: Env = process.env): EvaluationWorkerSettings {
  const whole = (name: string, dflt: number, min = 1) => envNumber(env, name, dflt, { min, whole: true });
  return {
    concurrency: whole("RUNWATCH_EVALUATION_CONCURRENCY", 8, 0),
    pollMs: whole("RUNWATCH_EVALUATION_POLL_MS", 1_000),
    leaseSeconds: whole("RUNWATCH_EVALUATION_LEASE_S", 300),
    backoffMs: whole("RUNWATCH_EVALUATION_BACKOFF_MS", 5_000),
    maxBackoffMs: whole("RUNWATCH_EVALUATION_MAX_BACKOFF_MS", 600_000),
  };
}

export interface EvaluationWorker {
  /** Runs due jobs until none is due; resolves with how many were run. */
  drain(): Promise<number>;
  backlog(): ReturnType<typeof evaluationBacklog>;
  close(): Promise<void>;
}

export async function startEvaluationWorker(
  ports: Pick<Ports, "sql" | "clickhouse" | "log" | "limiter" | "pubsub">,
  config: Config,
  logger: Logger,
  opts: {
    judge?: JudgeCall;
    settings?: EvaluationWorkerSettings;
    /** Only these projects' jobs (a worker dedicated to some tenants); default every project's. */
    projects?: () => readonly number[];
    /** Counts its passes, jobs run and jobs failed (its background job, deploy/jobs.ts). */
    counters?: JobCounters;
  } = {},
): Promise<EvaluationWorker> {
  const settings = opts.settings ?? loadEvaluationWorkerSettings();
  const log = logger.child({ component: "evaluation" });
  const secret = opts.judge ? "" : await resolveAgentSecret(config);
  const judge: JudgeCall = opts.judge ?? ((req) => callJudge(config, secret, req));
  const sealer = providerKeySealer(await resolveSessionSecret(config));
  const deps = {
    sealer,
    operator: { operatorJudgeKey: config.operatorJudgeKey, adminEmails: config.adminEmails },
    defaults: serviceDefaults(config),
    caps: config.evaluationCaps,
    sql: ports.sql, clickhouse: ports.clickhouse, events: createEventStore(ports.clickhouse), log: ports.log, limiter: ports.limiter, judge, logger: log,
    pubsub: ports.pubsub,
    cache: jobCache(),
    writeScores: batchedWrites((rows: Record<string, unknown>[]) => insertScoreRows(ports.clickhouse, rows)),
    appendEvents: batchedWrites((events: LoggedEvent[]) => appendEvents(ports.log, events)),
    backoffMs: (attempt: number) => Math.round(Math.min(settings.maxBackoffMs, settings.backoffMs * 2 ** Math.max(0, attempt - 1)) * (0.8 + 0.4 * Math.random())),
  };
  /** Keeps up to `concurrency` jobs in flight, claiming as slots free up (not in lockstep batches), until none is due. */
  async function pass(stopped: () => boolean): Promise<number> {
    let total = 0;
    const running = new Set<Promise<void>>();
    while (!stopped()) {
      const free = settings.concurrency - running.size;
      const jobs = free > 0 ? await claimJobs(ports.sql, free, settings.leaseSeconds, opts.projects?.()) : [];
      total += jobs.length;
      for (const job of jobs) {
        const run: Promise<void> = runJob(deps, job).then((status) => {
          if (status === "failed" && opts.counters) opts.counters.failures++;
        }, (err) => {
          if (opts.counters) opts.counters.failures++;
          // The job stays claimed until its lease ends, then runs again: nothing is lost.
          log.error("evaluation job failed unexpectedly; it runs again when its lease ends", { job_id: job.id, err });
        }).finally(() => running.delete(run));
        running.add(run);
      }
      if (running.size === 0) break; // nothing due, nothing running
      if (jobs.length === 0 || running.size >= settings.concurrency) await Promise.race(running);
    }
    await Promise.all(running);
    return total;
  }
  const worker = await startPollingWorker({
    pubsub: ports.pubsub, channel: EVALUATION_JOBS_CHANNEL, pollMs: settings.pollMs, pass,
    onError: (err) => log.error("evaluation worker: claiming jobs failed", { err }),
    counters: opts.counters,
  });

  log.info("evaluation worker started", { concurrency: settings.concurrency, poll_ms: settings.pollMs, agents_url: config.agentsUrl });
  return { drain: worker.drain, backlog: () => evaluationBacklog(ports.sql), close: worker.close };
}

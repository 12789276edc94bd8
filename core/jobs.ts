/**
 * Background jobs: work a process runs on its own schedule beside its role (notification delivery, evaluation jobs,
 * the retention sweep), all behind one interface and one lifecycle. The list a process runs is wired in one place
 * (deploy/jobs.ts); startJobs starts it in order and stops it in reverse, and reports each job's counters over
 * pub/sub (core/job-reports.ts) for GET /metrics.
 *
 * Timers that belong to a component rather than run beside it (the pipeline's health reports, the alert plugin's
 * sweep, a WebSocket ping, a Kafka heartbeat) live and die with that component and are not jobs.
 */
import type { Logger } from "./logger.js";
import type { PubSub } from "./ports/pubsub.js";
import { startJobReporter, type JobTelemetry } from "./job-reports.js";

export type { JobTelemetry };

export interface BackgroundJob {
  /** Unique in a process's list; the `job` label of its metrics. */
  readonly name: string;
  start(): Promise<void>;
  /** Stops taking new work and resolves once the work under way has finished. */
  stop(): Promise<void>;
  telemetry(): JobTelemetry;
}

/** A job's counters, filled by its loop (core/polling-worker.ts does it for queue workers). */
export class JobCounters implements JobTelemetry {
  passes = 0;
  items = 0;
  failures = 0;
  seconds = 0;

  /** Runs one pass and counts it: its time, the items it resolves with, a failure when it throws. */
  async pass(run: () => Promise<number>): Promise<number> {
    const start = performance.now();
    this.passes++;
    try {
      const items = await run();
      this.items += items;
      return items;
    } catch (err) {
      this.failures++;
      throw err;
    } finally {
      this.seconds += (performance.now() - start) / 1000;
    }
  }

  snapshot(): JobTelemetry {
    return { passes: this.passes, items: this.items, failures: this.failures, seconds: this.seconds };
  }
}

/** A job of a service that starts with the job's counters and stops with close(). */
export function backgroundJob(name: string, start: (counters: JobCounters) => Promise<{ close(): Promise<void> }>): BackgroundJob {
  const counters = new JobCounters();
  let running: { close(): Promise<void> } | undefined;
  return {
    name,
    async start() {
      if (running) throw new Error(`background job ${name} is already running`);
      running = await start(counters);
    },
    async stop() {
      const r = running;
      running = undefined;
      await r?.close();
    },
    telemetry: () => counters.snapshot(),
  };
}

export interface RunningJobs {
  readonly names: readonly string[];
  /** Stops every job, in the reverse of their start order; rejects with the first failure once all were asked. */
  stop(): Promise<void>;
}

/**
 * Starts the jobs in order (one that fails to start stops those before it, in reverse, and rejects), then reports
 * their counters on `pubsub` until stop().
 */
export async function startJobs(jobs: readonly BackgroundJob[], opts: { pubsub: PubSub; logger: Logger }): Promise<RunningJobs> {
  const names = jobs.map((j) => j.name);
  const repeated = names.find((n, i) => names.indexOf(n) !== i);
  if (repeated !== undefined) throw new Error(`two background jobs are named ${JSON.stringify(repeated)}`);
  const started: BackgroundJob[] = [];
  const stopAll = async (): Promise<void> => {
    let failure: { err: unknown } | undefined;
    for (const job of started.splice(0).reverse()) {
      try {
        await job.stop();
      } catch (err) {
        opts.logger.error("background job failed to stop", { job: job.name, err });
        failure ??= { err };
      }
    }
    if (failure) throw failure.err;
  };
  for (const job of jobs) {
    try {
      await job.start();
    } catch (err) {
      await stopAll().catch(() => {}); // logged; the start failure is the one to report
      throw err;
    }
    started.push(job);
  }
  const reporter = startJobReporter(opts.pubsub, jobs, opts.logger);
  return {
    names,
    async stop() {
      reporter.stop();
      await stopAll();
    },
  };
}

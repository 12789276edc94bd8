/** The background jobs' lifecycle (core/jobs.ts) and their reports (core/job-reports.ts), on the in-process pub/sub. */
import { describe, expect, it } from "vitest";
import { backgroundJob, JobCounters, startJobs, type BackgroundJob } from "./jobs.js";
import { isJobReport, JOB_REPORTS_CHANNEL, type JobReport } from "./job-reports.js";
import { createLogger } from "./logger.js";
import { memoryPubSub } from "./pubsub/memory.js";

const logger = createLogger("error");

/** A job that notes in `trail` when it starts and stops (failing to, when told), and counts one pass per start. */
function noting(name: string, trail: string[], fail: { start?: boolean; stop?: boolean } = {}): BackgroundJob {
  return backgroundJob(name, async (counters) => {
    if (fail.start) throw new Error(`${name} cannot start`);
    await counters.pass(async () => 2);
    trail.push(`start ${name}`);
    return {
      async close() {
        await new Promise((r) => setTimeout(r, 5)); // a stop that takes a while: the next waits for it
        trail.push(`stop ${name}`);
        if (fail.stop) throw new Error(`${name} cannot stop`);
      },
    };
  });
}

describe("startJobs", () => {
  it("starts the jobs in their order and stops them in reverse", async () => {
    const trail: string[] = [];
    const running = await startJobs([noting("a", trail), noting("b", trail), noting("c", trail)], { pubsub: memoryPubSub(), logger });
    expect(running.names).toEqual(["a", "b", "c"]);
    expect(trail).toEqual(["start a", "start b", "start c"]);
    await running.stop();
    expect(trail).toEqual(["start a", "start b", "start c", "stop c", "stop b", "stop a"]);
  });

  it("a job that cannot start stops those started before it, in reverse, and the start fails", async () => {
    const trail: string[] = [];
    const jobs = [noting("a", trail), noting("b", trail), noting("c", trail, { start: true }), noting("d", trail)];
    await expect(startJobs(jobs, { pubsub: memoryPubSub(), logger })).rejects.toThrow("c cannot start");
    expect(trail).toEqual(["start a", "start b", "stop b", "stop a"]);
  });

  it("a job that cannot stop does not keep the others running: all are stopped, then the failure is reported", async () => {
    const trail: string[] = [];
    const running = await startJobs([noting("a", trail), noting("b", trail, { stop: true }), noting("c", trail)], { pubsub: memoryPubSub(), logger });
    await expect(running.stop()).rejects.toThrow("b cannot stop");
    expect(trail.slice(3)).toEqual(["stop c", "stop b", "stop a"]);
  });

  it("refuses two jobs of one name (their metrics would be one series)", async () => {
    const trail: string[] = [];
    await expect(startJobs([noting("a", trail), noting("a", trail)], { pubsub: memoryPubSub(), logger })).rejects.toThrow('two background jobs are named "a"');
    expect(trail).toEqual([]);
  });

  it("reports each job's counters on pub/sub from start, and no more once stopped", async () => {
    const bus = memoryPubSub();
    const reports: JobReport[] = [];
    await bus.subscribePrefix(JOB_REPORTS_CHANNEL, (_c, m) => {
      const r = JSON.parse(m) as unknown;
      if (isJobReport(r)) reports.push(r);
    });
    const trail: string[] = [];
    const running = await startJobs([noting("a", trail), noting("b", trail)], { pubsub: bus, logger });
    await new Promise((r) => setTimeout(r, 10));
    expect(reports).toHaveLength(1);
    expect(reports[0]!.jobs).toEqual({
      a: { passes: 1, items: 2, failures: 0, seconds: expect.any(Number) },
      b: { passes: 1, items: 2, failures: 0, seconds: expect.any(Number) },
    });
    await running.stop();
    const n = reports.length;
    await new Promise((r) => setTimeout(r, 2_100));
    expect(reports).toHaveLength(n);
  });
});

describe("JobCounters", () => {
  it("counts a pass's items and time, and a pass that throws as a failure", async () => {
    const c = new JobCounters();
    expect(await c.pass(async () => { await new Promise((r) => setTimeout(r, 20)); return 3; })).toBe(3);
    await expect(c.pass(async () => { throw new Error("down"); })).rejects.toThrow("down");
    const t = c.snapshot();
    expect(t).toMatchObject({ passes: 2, items: 3, failures: 1 });
    expect(t.seconds).toBeGreaterThanOrEqual(0.015);
  });

  it("a job started twice is refused; stopped, it can start again", async () => {
    const trail: string[] = [];
    const job = noting("a", trail);
    await job.start();
    await expect(job.start()).rejects.toThrow("already running");
    await job.stop();
    await job.stop(); // a second stop is a no-op
    await job.start();
    await job.stop();
    expect(trail).toEqual(["start a", "stop a", "start a", "stop a"]);
    expect(job.telemetry()).toMatchObject({ passes: 2, items: 4 });
  });
});

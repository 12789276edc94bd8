/** GET /healthz's view of the pipeline (web/health.ts), driven by reports on a real in-process pub/sub and a clock. */
import { describe, expect, it } from "vitest";
import { createLogger } from "../core/logger.js";
import { PIPELINE_HEALTH_CHANNEL, type PipelineHealthReport } from "../core/pipeline-health.js";
import type { Sql } from "../core/ports/sql.js";
import { memoryPubSub } from "../core/pubsub/memory.js";
import { watchPipelineHealth } from "./health.js";
import { prometheusText } from "./metrics.js";
import { PipelineCounters } from "../pipeline/counters.js";
import type { CountersSnapshot, PluginsSnapshot } from "../core/pipeline-counters.js";
import { JOB_REPORTS_CHANNEL, type JobReport } from "../core/job-reports.js";
import { watchJobReports } from "./job-reports.js";

const sqlWith = (count: () => number): Sql => ({
  query: async <T>() => {
    const n = count();
    if (n < 0) throw new Error("postgres is down");
    return [{ n }] as T[];
  },
  transaction: async () => { throw new Error("unused"); },
  run: async () => { throw new Error("unused"); },
  close: async () => {},
});

async function setup(deadLetters: () => number = () => 0) {
  let now = 1_000_000;
  const bus = memoryPubSub();
  const view = await watchPipelineHealth(bus, sqlWith(deadLetters), createLogger("error"), () => now);
  const report = (r: Partial<PipelineHealthReport>) =>
    bus.publish(PIPELINE_HEALTH_CHANNEL, JSON.stringify({ member: "m1", lag_events: 0, oldest_unprocessed_age_ms: 0, at: now, ...r }));
  return { view, report, advance: (ms: number) => (now += ms) };
}

describe("pipeline health", () => {
  it("ok while the pipeline keeps up; reports lag, age and dead letters", async () => {
    const { view, report } = await setup(() => 3);
    await report({ lag_events: 12, oldest_unprocessed_age_ms: 40 });
    expect(await view.snapshot()).toEqual({ status: "ok", pipeline: { lag_events: 12, oldest_unprocessed_age_ms: 40, dead_letters: 3, workers: 1 }, evaluation: { waiting: 0, due: 0, retrying: 0 } });
  });

  it("degraded when the oldest unprocessed event is older than 30 s", async () => {
    const { view, report } = await setup();
    await report({ lag_events: 5, oldest_unprocessed_age_ms: 30_001 });
    expect((await view.snapshot()).status).toBe("degraded");
  });

  it("degraded when the lag has grown for 30 s, ok again once it falls", async () => {
    const { view, report, advance } = await setup();
    for (let i = 0; i <= 16; i++) {
      await report({ lag_events: 1000 * (i + 1), oldest_unprocessed_age_ms: 500 });
      advance(2_000);
    }
    expect((await view.snapshot()).status).toBe("degraded");
    await report({ lag_events: 10, oldest_unprocessed_age_ms: 10 });
    expect((await view.snapshot()).status).toBe("ok");
  });

  it("degraded when no pipeline has reported for 10 s (after the grace at start), and when Postgres cannot count", async () => {
    const { view, report, advance } = await setup();
    expect((await view.snapshot()).status).toBe("ok"); // grace
    advance(11_000);
    expect(await view.snapshot()).toMatchObject({ status: "degraded", pipeline: { workers: 0, lag_events: null } });
    await report({});
    expect((await view.snapshot()).status).toBe("ok");

    let n = 0;
    const down = await setup(() => n);
    await down.report({});
    n = -1;
    down.advance(3_000);
    await down.report({});
    expect(await down.view.snapshot()).toMatchObject({ status: "degraded", pipeline: { dead_letters: null } });
  });

  it("the largest lag of the members is the group's; ignores malformed reports", async () => {
    const { view, report } = await setup();
    await report({ member: "a", lag_events: 7 });
    await report({ member: "b", lag_events: 9 });
    await report({ member: "c", lag_events: Number.NaN });
    expect((await view.snapshot()).pipeline).toMatchObject({ lag_events: 9, workers: 2 });
  });
});

describe("pipeline counters", () => {
  const snapshot = (stored: number, parts: number, seconds: number[], plugins: PluginsSnapshot = {}): CountersSnapshot => {
    const counters = new PipelineCounters();
    counters.add("events_stored", stored);
    counters.add("parts", parts);
    for (const s of seconds) counters.observePart(s);
    counters.readGaugesFrom(() => ({ run_records: 7, known_event_ids: 3, stored_run_ids: 100 }));
    counters.readPluginsFrom(() => plugins);
    return counters.snapshot();
  };

  it("adds up the members that reported in the last 10 s, and GET /metrics renders them in the Prometheus text format", async () => {
    const { view, report, advance } = await setup(() => 2);
    expect(view.counters()).toBeUndefined();
    await report({ member: "a", counters: snapshot(10, 2, [0.25, 0.5]) });
    await report({ member: "b", counters: snapshot(5, 1, [20]) });
    await report({ member: "c" }); // an older pipeline that sends no counters
    expect(view.counters()).toMatchObject({ counters: { events_stored: 15, parts: 3 }, gauges: { run_records: 14 }, part_seconds: { count: 3 } });
    const text = prometheusText(await view.snapshot(), view.counters());
    expect(text).toContain("# TYPE runwatch_pipeline_events_stored_total counter\nrunwatch_pipeline_events_stored_total 15\n");
    expect(text).toContain('runwatch_pipeline_part_seconds_bucket{le="0.1"} 0\n');
    expect(text).toContain('runwatch_pipeline_part_seconds_bucket{le="0.25"} 1\n');
    expect(text).toContain('runwatch_pipeline_part_seconds_bucket{le="0.5"} 2\n');
    expect(text).toContain('runwatch_pipeline_part_seconds_bucket{le="+Inf"} 3\nrunwatch_pipeline_part_seconds_sum 20.75\nrunwatch_pipeline_part_seconds_count 3\n');
    expect(text).toContain("runwatch_pipeline_workers 3\n");
    expect(text).toContain("runwatch_dead_letters 2\n");
    advance(11_000); // every member silent: no counters to show
    expect(view.counters()).toBeUndefined();
    expect(prometheusText(await view.snapshot(), view.counters())).not.toContain("events_stored");
  });

  it("adds up each plugin's figures by plugin and hook, and renders them labelled", async () => {
    const { view, report } = await setup();
    const figures = (calls: number, errors: number, seconds: number) => ({ calls, events: calls * 2, runs: calls, errors, seconds });
    await report({ member: "a", counters: snapshot(1, 1, [0.1], { broadcast: { after_events_stored: figures(3, 0, 0.5) }, 'say "hi"\\': { on_event: figures(10, 1, 0.25) } }) });
    await report({ member: "b", counters: snapshot(1, 1, [0.1], { broadcast: { after_events_stored: figures(2, 1, 0.25), after_commit: figures(1, 0, 1) } }) });
    expect(view.counters()!.plugins).toEqual({
      broadcast: { after_events_stored: { calls: 5, events: 10, runs: 5, errors: 1, seconds: 0.75 }, after_commit: figures(1, 0, 1) },
      'say "hi"\\': { on_event: figures(10, 1, 0.25) },
    });
    const text = prometheusText(await view.snapshot(), view.counters());
    expect(text).toContain("# TYPE runwatch_plugin_calls_total counter\n");
    expect(text).toContain('runwatch_plugin_calls_total{plugin="broadcast",hook="after_events_stored"} 5\n');
    expect(text).toContain('runwatch_plugin_calls_total{plugin="broadcast",hook="after_commit"} 1\n');
    expect(text).toContain('runwatch_plugin_errors_total{plugin="say \\"hi\\"\\\\",hook="on_event"} 1\n');
    expect(text).toContain('runwatch_plugin_seconds_total{plugin="broadcast",hook="after_events_stored"} 0.75\n');
    expect(text).toContain('runwatch_plugin_events_total{plugin="broadcast",hook="after_events_stored"} 10\n');
  });
});

describe("background job reports", () => {
  it("adds up each job's counters over the processes that reported in the last 10 s; GET /metrics renders them labelled", async () => {
    let now = 1_000_000;
    const bus = memoryPubSub();
    const view = await watchJobReports(bus, createLogger("error"), () => now);
    const report = (r: JobReport) => bus.publish(JOB_REPORTS_CHANNEL, JSON.stringify(r));
    expect(view.jobs()).toEqual({});
    await report({ member: "a", at: now, jobs: { notifications: { passes: 4, items: 2, failures: 1, seconds: 0.5 }, retention: { passes: 1, items: 0, failures: 0, seconds: 0.25 } } });
    await report({ member: "b", at: now, jobs: { notifications: { passes: 6, items: 3, failures: 0, seconds: 1 } } });
    await bus.publish(JOB_REPORTS_CHANNEL, JSON.stringify({ member: "c", at: now, jobs: { evaluation: { passes: "many" } } })); // malformed: ignored
    await bus.publish(JOB_REPORTS_CHANNEL, "not json");
    expect(view.jobs()).toEqual({
      notifications: { passes: 10, items: 5, failures: 1, seconds: 1.5 },
      retention: { passes: 1, items: 0, failures: 0, seconds: 0.25 },
    });
    const text = prometheusText({ status: "ok", pipeline: { lag_events: null, oldest_unprocessed_age_ms: null, dead_letters: 0, workers: 0 }, evaluation: null }, undefined, view.jobs());
    expect(text).toContain('# TYPE runwatch_job_passes_total counter\nrunwatch_job_passes_total{job="notifications"} 10\nrunwatch_job_passes_total{job="retention"} 1\n');
    expect(text).toContain('runwatch_job_items_total{job="notifications"} 5\n');
    expect(text).toContain('runwatch_job_failures_total{job="notifications"} 1\n');
    expect(text).toContain('runwatch_job_seconds_total{job="retention"} 0.25\n');
    now += 11_000; // every process silent
    expect(view.jobs()).toEqual({});
    expect(prometheusText({ status: "ok", pipeline: { lag_events: null, oldest_unprocessed_age_ms: null, dead_letters: 0, workers: 0 }, evaluation: null }, undefined, view.jobs())).not.toContain("runwatch_job_");
    await view.close();
  });
});

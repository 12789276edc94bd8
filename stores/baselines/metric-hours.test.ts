/**
 * The hourly aggregates of learned baselines, on chDB always and on a ClickHouse server when CLICKHOUSE_URL is set (a
 * fresh database per run): the roll-up from stored runs, a late run re-rolled, the baseline statistics of seeded
 * history (median and MAD per hour of the week and over all hours), and the live window.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { newRunRecord, type RunRecord } from "../../core/events/run.js";
import { runIdFor } from "../../core/ids.js";
import { JUDGE_AGENT } from "../../core/events/judge-runs.js";
import { migrateClickHouse } from "../../core/clickhouse/migrate.js";
import { describeOnTargets, H1, HOUR } from "./testing/targets.js";
import { createEventStore } from "../runs/event-store.js";
import { baselineStats, insertMetricHours, latestRolledHour, rollUpHours, windowMetrics, type MetricHour } from "./metric-hours.js";

const PID = 42;

function endedRun(id: string, startMs: number, seconds: number, patch: Partial<RunRecord> = {}): RunRecord {
  const started = new Date(startMs).toISOString();
  const ended = new Date(startMs + seconds * 1000).toISOString();
  return {
    ...newRunRecord({ project_id: PID, user_id: PID }, id, runIdFor(PID, id), started),
    agent_name: "refund-bot", status: "success", started_at: started, ended_at: ended, status_at: ended, last_event_at: ended,
    cost_usd: 0.01, total_tokens: 100, version: 1, ...patch,
  };
}

describeOnTargets("baselines", (target) => {
  let ch: ClickHouse;
  beforeAll(async () => {
    ch = await target.open();
    await migrateClickHouse(ch);
  });
  afterAll(async () => {
    await ch?.close();
    await target.teardown();
  });

  it("rolls up the runs that ended in each hour, per agent and metric, and a late run replaces its hour's rows", async () => {
    const store = createEventStore(ch);
    await store.upsertRuns([
      endedRun("a1", H1 + 60_000, 1),
      endedRun("a2", H1 + 120_000, 2),
      endedRun("a3", H1 + 180_000, 3, { status: "error", cost_usd: 0.05, total_tokens: 500 }),
      endedRun("a4", H1 + 240_000, 10),
      endedRun("b1", H1 + HOUR + 60_000, 4),
      endedRun("j1", H1 + 60_000, 50, { agent_name: JUDGE_AGENT }),
      endedRun("e1", H1 + 60_000, 50, { experiment_id: "exp-1" } as Partial<RunRecord>),
      { ...endedRun("r1", H1 + 60_000, 50), status: "running", ended_at: null },
    ]);
    expect(await latestRolledHour(ch, PID)).toBeUndefined();
    await rollUpHours(ch, { projectId: PID, from: new Date(H1), to: new Date(H1 + 2 * HOUR) });
    const rows = async () => Object.fromEntries((await ch.query<{ k: string; runs: number; value: number }>(
      `SELECT concat(agent_name, ' ', toString(toHour(hour)), ' ', metric) AS k, runs, value FROM agent_metric_hours FINAL WHERE project_id = {pid:UInt64}`, { pid: PID },
    )).map((r) => [r.k, [Number(r.runs), Number(r.value)]]));
    expect(await rows()).toEqual({
      "refund-bot 14 error_rate": [4, 0.25],
      "refund-bot 14 latency_p50": [4, 3], // quantileExact: the upper median of 1, 2, 3, 10
      "refund-bot 14 latency_p95": [4, 10],
      "refund-bot 14 cost_per_run": [4, 0.02],
      "refund-bot 14 tokens_per_run": [4, 200],
      "refund-bot 15 error_rate": [1, 0],
      "refund-bot 15 latency_p50": [1, 4],
      "refund-bot 15 latency_p95": [1, 4],
      "refund-bot 15 cost_per_run": [1, 0.01],
      "refund-bot 15 tokens_per_run": [1, 100],
    });
    expect((await latestRolledHour(ch, PID))?.toISOString()).toBe(new Date(H1 + HOUR).toISOString());

    await store.upsertRuns([endedRun("b2", H1 + HOUR + 120_000, 8, { status: "error" })]);
    await rollUpHours(ch, { projectId: PID, from: new Date(H1 + HOUR), to: new Date(H1 + 2 * HOUR) });
    const after = await rows();
    expect(after["refund-bot 15 error_rate"]).toEqual([2, 0.5]);
    expect(after["refund-bot 14 error_rate"]).toEqual([4, 0.25]);
  });

  it("the baseline of an hour of the week: median and MAD of that slot, and of all hours, over hours with enough runs", async () => {
    const pid = 43;
    const until = H1 + 7 * 24 * HOUR; // the next Tuesday 14:00: its 28 days back are within the table's 35
    const rows: MetricHour[] = [];
    // Four weeks: Tuesdays 14:00 at 4, 5, 6, 20 s (one past incident), every other hour at 1 s; one thin hour ignored.
    const slotValues = [4, 5, 6, 20];
    for (let h = 1; h <= 28 * 24; h++) {
      const at = new Date(until - h * HOUR);
      const inSlot = at.getUTCDay() === 2 && at.getUTCHours() === 14;
      rows.push({ agent_name: "refund-bot", metric: "latency_p95", hour: at, runs: 10, value: inSlot ? slotValues.shift()! : 1 });
    }
    rows.push({ agent_name: "refund-bot", metric: "latency_p95", hour: new Date(until - 3 * HOUR + 0), runs: 1, value: 99 });
    rows.push({ agent_name: "other-bot", metric: "latency_p95", hour: new Date(until - HOUR), runs: 10, value: 2 });
    await insertMetricHours(ch, pid, rows);
    const stats = await baselineStats(ch, {
      projectId: pid, metric: "latency_p95", hourOfWeek: 24 + 14, since: new Date(until - 28 * 24 * HOUR), until: new Date(until), minRuns: 3,
    });
    const bot = stats.find((s) => s.agent_name === "refund-bot")!;
    // slot: 4, 5, 6, 20 → upper median 6; deviations 2, 1, 0, 14 → upper median 2
    expect(bot.slot).toEqual({ n: 4, median: 6, mad: 2 });
    expect(bot.all.n).toBe(28 * 24);
    expect(bot.all.median).toBe(1);
    expect(bot.all.mad).toBe(0);
    expect(bot.hour_volume).toBe(10); // the thin hour (1 run) is not counted
    expect(stats.find((s) => s.agent_name === "other-bot")).toMatchObject({ slot: { n: 0 }, all: { n: 1, median: 2 } });
    const one = await baselineStats(ch, {
      projectId: pid, metric: "latency_p95", agent: "other-bot", hourOfWeek: 38, since: new Date(until - 28 * 24 * HOUR), until: new Date(until), minRuns: 3,
    });
    expect(one.map((s) => s.agent_name)).toEqual(["other-bot"]);
  });

  it("the live window: each agent's metrics over the runs that ended in it", async () => {
    const pid = 44;
    const now = H1 + 7 * 24 * HOUR + 30 * 60_000;
    const store = createEventStore(ch);
    const run = (id: string, agent: string, endAgo: number, seconds: number, status = "success") => {
      const r = endedRun(id, now - endAgo - seconds * 1000, seconds, { agent_name: agent, status: status as RunRecord["status"] });
      return { ...r, project_id: pid, user_id: pid, run_id: runIdFor(pid, id) };
    };
    await store.upsertRuns([run("w1", "refund-bot", 60_000, 12), run("w2", "refund-bot", 120_000, 14, "error"), run("w3", "planner", 30_000, 1), run("old", "refund-bot", 3 * HOUR, 99)]);
    const w = await windowMetrics(ch, { projectId: pid, from: new Date(now - 30 * 60_000), to: new Date(now) });
    const bot = w.find((x) => x.agent_name === "refund-bot")!;
    expect(bot.runs).toBe(2);
    expect(bot.values.error_rate).toBe(0.5);
    expect(bot.values.latency_p95).toBe(14);
    expect(w.find((x) => x.agent_name === "planner")?.runs).toBe(1);
    expect((await windowMetrics(ch, { projectId: pid, agent: "planner", from: new Date(now - 30 * 60_000), to: new Date(now) })).map((x) => x.agent_name)).toEqual(["planner"]);
  });
});

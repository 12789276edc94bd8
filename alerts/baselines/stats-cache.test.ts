/**
 * The anomaly trigger's cached baseline statistics, on chDB always and on a ClickHouse server when CLICKHOUSE_URL is
 * set: the same numbers as a fresh read; read once per key however many sweeps ask; read again when a roll-up
 * writes hours (and then seeing them), and for the next hour; per agent set and metric; concurrent asks share a read.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { migrateClickHouse } from "../../core/clickhouse/migrate.js";
import { describeOnTargets, HOUR } from "../../stores/baselines/testing/targets.js";
import { baselineStats, insertMetricHours, type MetricHour } from "../../stores/baselines/metric-hours.js";
import { baselineStatsReads, cachedBaselineStats, cachedStats, hoursWritten } from "./stats-cache.js";
import { hourOfWeek } from "./band.js";

const PID = 91;
const UNTIL = Math.floor(Date.now() / HOUR) * HOUR;

describeOnTargets("cached baseline statistics", (target) => {
  let ch: ClickHouse;
  beforeAll(async () => {
    ch = await target.open();
    await migrateClickHouse(ch);
    const rows: MetricHour[] = [];
    for (let h = 1; h <= 28 * 24; h++) {
      rows.push({ agent_name: "a-bot", metric: "error_rate", hour: new Date(UNTIL - h * HOUR), runs: 20, value: (h % 5) / 100 });
      rows.push({ agent_name: "b-bot", metric: "error_rate", hour: new Date(UNTIL - h * HOUR), runs: 20, value: (h % 3) / 50 });
    }
    await insertMetricHours(ch, PID, rows);
  });
  afterAll(async () => {
    await ch?.close();
    await target.teardown();
  });

  const query = (until: number, agent?: string) => ({
    projectId: PID, metric: "error_rate", agent, hourOfWeek: hourOfWeek(new Date(until)), since: new Date(until - 28 * 24 * HOUR), until: new Date(until), minRuns: 3,
  });

  it("answers what a fresh read answers, reading once for many sweeps of the hour", async () => {
    const before = baselineStatsReads();
    const fresh = await baselineStats(ch, query(UNTIL));
    const sweeps = await Promise.all([cachedBaselineStats(ch, query(UNTIL)), cachedBaselineStats(ch, query(UNTIL))]);
    for (let i = 0; i < 10; i++) sweeps.push(await cachedBaselineStats(ch, query(UNTIL)));
    for (const s of sweeps) expect(s).toEqual(fresh);
    expect(baselineStatsReads() - before).toBe(1);
    // One agent is another key; so is another metric's.
    expect(await cachedBaselineStats(ch, query(UNTIL, "b-bot"))).toEqual(await baselineStats(ch, query(UNTIL, "b-bot")));
    expect(baselineStatsReads() - before).toBe(2);
  });

  it("a roll-up that writes hours, and the hour turning, read again", async () => {
    await cachedBaselineStats(ch, query(UNTIL));
    let before = baselineStatsReads();
    await insertMetricHours(ch, PID, [{ agent_name: "c-bot", metric: "error_rate", hour: new Date(UNTIL - HOUR), runs: 20, value: 0.5 }]);
    expect((await cachedBaselineStats(ch, query(UNTIL))).map((s) => s.agent_name).sort()).toEqual(["a-bot", "b-bot"]); // not written by a roll-up
    hoursWritten(ch, PID);
    const after = await cachedBaselineStats(ch, query(UNTIL));
    expect(after.map((s) => s.agent_name).sort()).toEqual(["a-bot", "b-bot", "c-bot"]);
    expect(after).toEqual(await baselineStats(ch, query(UNTIL)));
    expect(baselineStatsReads() - before).toBe(1);
    before = baselineStatsReads();
    hoursWritten(ch, PID + 1); // another project's roll-up
    await cachedBaselineStats(ch, query(UNTIL));
    expect(baselineStatsReads() - before).toBe(0);
    expect(await cachedBaselineStats(ch, query(UNTIL + HOUR))).toEqual(await baselineStats(ch, query(UNTIL + HOUR)));
    expect(baselineStatsReads() - before).toBe(1);
  });
});

describe("cached statistics of any read (one environment's, as the anomaly trigger with `environment` asks)", () => {
  it("reads once per key until the project's hours are written, apart from other keys and projects", async () => {
    const ch = {} as ClickHouse; // the cache's key only: the reads below are the test's own
    let reads = 0;
    const read = async () => { reads++; return []; };
    const ask = (pid: number, env: string) => cachedStats(ch, pid, ["environment", env, "latency_p95"], read);
    await ask(7, "production");
    await ask(7, "production");
    expect(reads).toBe(1);
    await ask(7, "staging");
    await ask(8, "production");
    expect(reads).toBe(3);
    hoursWritten(ch, 7);
    await ask(7, "production");
    await ask(8, "production");
    expect(reads).toBe(4);
  });
});

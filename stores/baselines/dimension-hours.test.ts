/**
 * The hourly aggregates per environment and per config version, on chDB always and on a ClickHouse server when
 * CLICKHOUSE_URL is set (a fresh database per run): the roll-up from stored runs, tool calls and scores (each run
 * counted once under its environment and once under its version; judge runs left out), and the statistics of seeded
 * history per value of a dimension (newest first, '' left out, one value, every agent).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { newRunRecord, type RunRecord } from "../../core/events/run.js";
import { runIdFor } from "../../core/ids.js";
import { JUDGE_AGENT } from "../../core/events/judge-runs.js";
import { migrateClickHouse } from "../../core/clickhouse/migrate.js";
import { describeOnTargets, H1, HOUR } from "./testing/targets.js";
import { createEventStore } from "../runs/event-store.js";
import { dimensionStats, insertDimensionHours, latestDimensionHour, rollUpDimensionHours, type DimensionHour } from "./dimension-hours.js";

const PID = 61;
const chTime = (ms: number) => new Date(ms).toISOString().replace("T", " ").replace("Z", "");

function endedRun(id: string, seconds: number, patch: Partial<RunRecord>): RunRecord {
  const started = new Date(H1 + 60_000).toISOString();
  const ended = new Date(H1 + 60_000 + seconds * 1000).toISOString();
  return {
    ...newRunRecord({ project_id: PID, user_id: PID }, id, runIdFor(PID, id), started),
    agent_name: "refund-bot", status: "success", started_at: started, ended_at: ended, status_at: ended, last_event_at: ended,
    cost_usd: 0.01, total_tokens: 100, version: 1, ...patch,
  };
}

const toolEnd = (id: string, ms: number, payload: Record<string, unknown>) => ({
  event_id: randomUUID(), project_id: PID, user_id: PID, run_id: runIdFor(PID, id), sdk_run_id: id, event_type: "tool_call", agent_name: "",
  payload: JSON.stringify({ phase: "end", tool_name: "search", ...payload }), occurred_at: chTime(ms), received_at: chTime(ms),
});

const score = (id: string, ms: number, value: number) => ({
  score_id: randomUUID(), project_id: PID, user_id: PID, run_id: runIdFor(PID, id), sdk_run_id: id, span_id: "", name: "correctness",
  value_type: "number", value_number: value, value_string: "", comment: "", source: "api", created_at: chTime(ms),
});

describeOnTargets("baselines per dimension", (target) => {
  let ch: ClickHouse;
  beforeAll(async () => {
    ch = await target.open();
    await migrateClickHouse(ch);
  });
  afterAll(async () => {
    await ch?.close();
    await target.teardown();
  });

  it("rolls up each hour per environment and per config version: run metrics, the tool error rate and score means", async () => {
    await createEventStore(ch).upsertRuns([
      endedRun("p1", 2, { environment: "production", config_version: 1 }),
      endedRun("p2", 4, { environment: "production", config_version: 2, status: "error" }),
      endedRun("s1", 10, { environment: "staging", config_version: 2 }),
      endedRun("n1", 1, {}),
      endedRun("j1", 50, { agent_name: JUDGE_AGENT, environment: "production", config_version: 1 }),
    ]);
    await ch.insert("agent_events", [
      toolEnd("p1", H1 + 70_000, { error: "timeout" }), toolEnd("p1", H1 + 71_000, {}), toolEnd("s1", H1 + 72_000, {}),
      toolEnd("j1", H1 + 73_000, { error: "judge" }),
    ]);
    await ch.insert("scores", [score("p1", H1 + 80_000, 0.8), score("s1", H1 + 81_000, 0.4)]);
    expect(await latestDimensionHour(ch, PID)).toBeUndefined();
    await rollUpDimensionHours(ch, { projectId: PID, from: new Date(H1), to: new Date(H1 + HOUR) });
    const rows = Object.fromEntries((await ch.query<{ k: string; runs: number; value: number }>(
      `SELECT concat(dimension, '=', dimension_value, ' ', metric) AS k, runs, value FROM agent_metric_hours_by_dimension FINAL
        WHERE project_id = {pid:UInt64} AND metric IN ('error_rate', 'latency_p95', 'tool_error_rate', 'score_mean:correctness')`,
      { pid: PID },
    )).map((r) => [r.k, [Number(r.runs), Number(r.value)]]));
    expect(rows).toEqual({
      "environment=production error_rate": [2, 0.5],
      "environment=production latency_p95": [2, 4],
      "environment=staging error_rate": [1, 0],
      "environment=staging latency_p95": [1, 10],
      "environment= error_rate": [1, 0], // a run that named no environment
      "environment= latency_p95": [1, 1],
      "config_version=1 error_rate": [1, 0],
      "config_version=1 latency_p95": [1, 2],
      "config_version=2 error_rate": [2, 0.5],
      "config_version=2 latency_p95": [2, 10],
      "config_version= error_rate": [1, 0],
      "config_version= latency_p95": [1, 1],
      "environment=production tool_error_rate": [2, 0.5],
      "environment=staging tool_error_rate": [1, 0],
      "config_version=1 tool_error_rate": [2, 0.5],
      "config_version=2 tool_error_rate": [1, 0],
      "environment=production score_mean:correctness": [1, 0.8],
      "environment=staging score_mean:correctness": [1, 0.4],
      "config_version=1 score_mean:correctness": [1, 0.8],
      "config_version=2 score_mean:correctness": [1, 0.4],
    });
    expect((await latestDimensionHour(ch, PID))?.toISOString()).toBe(new Date(H1).toISOString());
  });

  it("the statistics of each environment's and version's own history, newest first, one value, every agent", async () => {
    const pid = 62;
    const until = H1 + 7 * 24 * HOUR;
    const rows: DimensionHour[] = [];
    const slotValues = [4, 5, 6, 20];
    const row = (dimension: DimensionHour["dimension"], value: string, at: Date, v: number, agent = "refund-bot"): DimensionHour =>
      ({ agent_name: agent, dimension, dimension_value: value, metric: "latency_p95", hour: at, runs: 10, value: v });
    for (let h = 1; h <= 28 * 24; h++) {
      const at = new Date(until - h * HOUR);
      const inSlot = at.getUTCDay() === 2 && at.getUTCHours() === 14;
      rows.push(row("environment", "production", at, inSlot ? slotValues.shift()! : 1));
      rows.push(row("environment", "staging", at, 9));
      rows.push(row("environment", "", at, 50)); // runs without an environment: not a band of their own
      rows.push(row("config_version", "6", at, 1));
      if (h <= 5) rows.push(row("config_version", "7", at, 3));
      if (h === 1) rows.push(row("environment", "production", at, 2, "other-bot"));
    }
    await insertDimensionHours(ch, pid, rows);
    const range = { projectId: pid, metric: "latency_p95", hourOfWeek: 24 + 14, since: new Date(until - 28 * 24 * HOUR), until: new Date(until), minRuns: 3 };
    const envs = await dimensionStats(ch, { ...range, agent: "refund-bot", dimension: "environment" });
    expect(envs.map((s) => s.dimension_value).sort()).toEqual(["production", "staging"]);
    const prod = envs.find((s) => s.dimension_value === "production")!;
    expect(prod.slot).toEqual({ n: 4, median: 6, mad: 2 });
    expect(prod.all).toMatchObject({ n: 28 * 24, median: 1 });
    expect(envs.find((s) => s.dimension_value === "staging")!.all).toEqual({ n: 28 * 24, median: 9, mad: 0 });
    const versions = await dimensionStats(ch, { ...range, agent: "refund-bot", dimension: "config_version", limit: 1 });
    expect(versions.map((s) => [s.dimension_value, s.all.n])).toEqual([["7", 5]]); // both end in the same hour: the higher value first
    const one = await dimensionStats(ch, { ...range, agent: "refund-bot", dimension: "config_version", value: "6" });
    expect(one.map((s) => [s.dimension_value, s.all.n, s.latest_hour])).toEqual([["6", 28 * 24, new Date(until - HOUR).toISOString()]]);
    const everyAgent = await dimensionStats(ch, { ...range, dimension: "environment", value: "production" });
    expect(everyAgent.map((s) => [s.agent_name, s.all.n]).sort()).toEqual([["other-bot", 1], ["refund-bot", 28 * 24]]);
  });
});

/**
 * The event metrics of learned baselines (tool error rate, score means), on chDB always and on a ClickHouse server
 * when CLICKHOUSE_URL is set: rolled up per agent and hour from stored tool calls and scores, attributed through the
 * runs (judge and experiment runs left out), and the same over a live window.
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
import { rollUpEventHours, windowEventMetric } from "./event-metrics.js";

const PID = 52;

function run(id: string, agent: string, patch: Partial<RunRecord> = {}): RunRecord {
  const at = new Date(H1 + 2 * HOUR).toISOString();
  return {
    ...newRunRecord({ project_id: PID, user_id: PID }, id, runIdFor(PID, id), new Date(H1).toISOString()),
    agent_name: agent, status: "success", started_at: new Date(H1).toISOString(), ended_at: at, status_at: at, last_event_at: at, version: 1, ...patch,
  };
}

const chTime = (ms: number) => new Date(ms).toISOString().replace("T", " ").replace("Z", "");

/** A tool_call end event of run `id` at `ms`. */
const toolEnd = (id: string, ms: number, payload: Record<string, unknown>) => ({
  event_id: randomUUID(), project_id: PID, user_id: PID, run_id: runIdFor(PID, id), sdk_run_id: id, event_type: "tool_call", agent_name: "",
  payload: JSON.stringify({ phase: "end", tool_name: "search", ...payload }), occurred_at: chTime(ms), received_at: chTime(ms),
});

const score = (id: string, ms: number, name: string, value: number | boolean | string) => ({
  score_id: randomUUID(), project_id: PID, user_id: PID, run_id: runIdFor(PID, id), sdk_run_id: id, span_id: "", name,
  value_type: typeof value, value_number: typeof value === "string" ? 0 : Number(value), value_string: typeof value === "string" ? value : "",
  comment: "", source: "api", created_at: chTime(ms),
});

describeOnTargets("baseline event metrics", (target) => {
  let ch: ClickHouse;
  beforeAll(async () => {
    ch = await target.open();
    await migrateClickHouse(ch);
    await createEventStore(ch).upsertRuns([
      run("a", "refund-bot"), run("b", "refund-bot"), run("p", "planner"),
      run("j", JUDGE_AGENT), run("x", "refund-bot", { experiment_id: "exp-1" } as Partial<RunRecord>),
    ]);
    const start = { ...toolEnd("a", H1 + 60_000, {}), payload: JSON.stringify({ phase: "start", tool_name: "search" }) };
    const failed = toolEnd("a", H1 + 120_000, { error: "timeout" });
    await ch.insert("agent_events", [
      start,
      failed, failed, // a replayed event counts once
      toolEnd("a", H1 + 180_000, { output_preview: "ok" }),
      toolEnd("b", H1 + 240_000, { error: "  " }), // blank: not a failure
      toolEnd("b", H1 + 300_000, { status: "ERROR" }),
      toolEnd("b", H1 + HOUR + 60_000, { error: { code: 500 } }),
      toolEnd("p", H1 + 60_000, {}),
      toolEnd("j", H1 + 60_000, { error: "judge" }),
      toolEnd("x", H1 + 60_000, { error: "experiment" }),
    ]);
    await ch.insert("scores", [
      score("a", H1 + 60_000, "correctness", 0.9), score("b", H1 + 120_000, "correctness", 0.5), score("a", H1 + 130_000, "correctness", true),
      score("a", H1 + 140_000, "tone", "friendly"), score("p", H1 + HOUR + 60_000, "correctness", 0.2), score("j", H1 + 60_000, "correctness", 0),
    ]);
  });
  afterAll(async () => {
    await ch?.close();
    await target.teardown();
  });

  it("rolls up each agent's tool error rate and score means per hour, judge and experiment runs left out", async () => {
    await rollUpEventHours(ch, { projectId: PID, from: new Date(H1), to: new Date(H1 + 2 * HOUR) });
    const rows = Object.fromEntries((await ch.query<{ k: string; runs: number; value: number }>(
      `SELECT concat(agent_name, ' ', toString(toHour(hour)), ' ', metric) AS k, runs, value FROM agent_metric_hours FINAL WHERE project_id = {pid:UInt64}`, { pid: PID },
    )).map((r) => [r.k, [Number(r.runs), Number(r.value)]]));
    expect(Object.keys(rows).sort()).toEqual([
      "planner 14 tool_error_rate", "planner 15 score_mean:correctness",
      "refund-bot 14 score_mean:correctness", "refund-bot 14 tool_error_rate", "refund-bot 15 tool_error_rate",
    ]);
    expect(rows["refund-bot 14 tool_error_rate"]).toEqual([4, 0.5]); // timeout and status ERROR of 4 calls
    expect(rows["refund-bot 15 tool_error_rate"]).toEqual([1, 1]);
    expect(rows["planner 14 tool_error_rate"]).toEqual([1, 0]);
    expect(rows["refund-bot 14 score_mean:correctness"]![0]).toBe(3);
    expect(rows["refund-bot 14 score_mean:correctness"]![1]).toBeCloseTo((0.9 + 0.5 + 1) / 3, 9);
    expect(rows["planner 15 score_mean:correctness"]).toEqual([1, 0.2]);
  });

  it("the live window: the same metric over [from, to) per agent, or for one", async () => {
    const from = new Date(H1), to = new Date(H1 + 2 * HOUR);
    const tools = await windowEventMetric(ch, { projectId: PID, metric: { kind: "tool_error_rate" }, from, to });
    expect(tools.sort((a, b) => a.agent_name.localeCompare(b.agent_name))).toEqual([
      { agent_name: "planner", runs: 1, value: 0 }, { agent_name: "refund-bot", runs: 5, value: 0.6 },
    ]);
    const scores = await windowEventMetric(ch, { projectId: PID, agent: "refund-bot", metric: { kind: "score_mean", score: "correctness" }, from, to });
    expect(scores).toHaveLength(1);
    expect(scores[0]!.runs).toBe(3);
    expect(await windowEventMetric(ch, { projectId: PID, metric: { kind: "score_mean", score: "tone" }, from, to })).toEqual([]);
  });
});

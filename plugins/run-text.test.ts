import { describe, expect, it } from "vitest";
import { runTextRows } from "./run-text.js";
import { applyEvents, stored, testEvent } from "./testing.js";
import { statusMachine } from "./status-machine.js";

const t = (s: number) => new Date(Date.UTC(2026, 10, 23, 10, 0, s)).toISOString();

describe("run-text rows", () => {
  it("one row per input, output, error and span name (once per run and name), lower-cased; other events none", async () => {
    const runs = new Map();
    const events = [
      testEvent({ event_type: "run_start", occurred_at: t(0), payload: { input: [{ role: "user", content: "Where is my REFUND?" }] } }),
      testEvent({ event_type: "step", occurred_at: t(1), payload: { node_name: "Plan", phase: "start" } }),
      testEvent({ event_type: "step", occurred_at: t(2), payload: { node_name: "Plan", phase: "end" } }),
      testEvent({ event_type: "tool_call", occurred_at: t(3), payload: { tool_name: "lookup_order", phase: "end" } }),
      testEvent({ event_type: "human_input_requested", occurred_at: t(4), payload: { question: "Ship it?" } }),
      testEvent({ event_type: "error", occurred_at: t(5), payload: { error_type: "TimeoutError", error_message: "Upstream TIMED OUT" } }),
      testEvent({ event_type: "run_end", occurred_at: t(6), payload: { output: "Refunded." } }),
      testEvent({ event_type: "step", sdk_run_id: "other", occurred_at: t(7), payload: { node_name: "Plan", phase: "end" } }),
    ];
    const { part } = await applyEvents([statusMachine()], events, runs);
    const rows = runTextRows(stored(part));
    expect(rows.map((r) => [r.sdk_run_id, r.text])).toEqual([
      ["run-1", 'where is my refund?\n[{"role":"user","content":"where is my refund?"}]'],
      ["run-1", "plan"],
      ["run-1", "lookup_order"],
      ["run-1", "timeouterror: upstream timed out"],
      ["run-1", "refunded."],
      ["other", "plan"],
    ]);
    expect(rows[0]).toMatchObject({ project_id: 1, run_id: events[0]!.run_id, event_id: events[0]!.event_id, at: t(0) });
    // The next part of the run writes a name it already wrote no more; a replayed input again (its row may be missing).
    const { part: next } = await applyEvents([statusMachine()], [
      testEvent({ event_type: "step", occurred_at: t(8), payload: { node_name: "Plan", phase: "start" } }),
      testEvent({ event_type: "run_start", occurred_at: t(0), payload: { input: "again" }, duplicate: true }),
    ], runs);
    expect(runTextRows(stored(next)).map((r) => r.text)).toEqual(["again"]);
  });
});

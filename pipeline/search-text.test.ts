import { describe, expect, it } from "vitest";
import { applyEvents, testEvent } from "../plugins/testing.js";
import { statusMachine } from "../plugins/status-machine.js";
import { searchTexts } from "./search-text.js";

const t = (s: number) => new Date(Date.UTC(2026, 10, 23, 10, 0, s)).toISOString();

describe("search texts of a part's events", () => {
  it("an input, an output, an error and a span name (once per run and name), lower-cased; other events none", async () => {
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
    const texts = searchTexts(part.events, part.runs);
    expect([...texts].map(([e, text]) => [e.sdk_run_id, e.event_type, text])).toEqual([
      ["run-1", "run_start", 'where is my refund?\n[{"role":"user","content":"where is my refund?"}]'],
      ["run-1", "step", "plan"],
      ["run-1", "tool_call", "lookup_order"],
      ["run-1", "error", "timeouterror: upstream timed out"],
      ["run-1", "run_end", "refunded."],
      ["other", "step", "plan"],
    ]);
    expect(texts.get(part.events[1]!)).toBe("plan");
    expect(texts.has(part.events[2]!)).toBe(false);
    // The next part of the run gives a name it already gave no more.
    const { part: next } = await applyEvents([statusMachine()], [
      testEvent({ event_type: "step", occurred_at: t(8), payload: { node_name: "Plan", phase: "start" } }),
      testEvent({ event_type: "tool_call", occurred_at: t(9), payload: { tool_name: "Refund", phase: "end" } }),
    ], runs);
    expect([...searchTexts(next.events, next.runs).values()]).toEqual(["refund"]);
  });

  it("gives nothing for a payload that is not an object", () => {
    const e = testEvent({ event_type: "run_start", payload: "plain" as unknown as Record<string, unknown> });
    expect(searchTexts([e], new Map()).size).toBe(0);
  });
});

import { describe, expect, it } from "vitest";
import { statusMachine } from "./status-machine.js";
import { applyEvents, testEvent } from "./testing.js";

const t = (s: number) => new Date(Date.UTC(2026, 10, 23, 10, 0, s)).toISOString();

describe("status-machine plugin", () => {
  it("moves running → waiting_for_input → running → success and keeps the run's fields", async () => {
    const { run } = await applyEvents([statusMachine()], [
      testEvent({ event_type: "run_start", occurred_at: t(0), agent_name: "planner", payload: { framework: "langgraph" }, config_version: 3 }),
      testEvent({ event_type: "step", occurred_at: t(1), payload: { node_name: "a", phase: "start" } }),
      testEvent({ event_type: "human_input_requested", occurred_at: t(2), payload: { question: "Ship it?" } }),
    ]);
    expect(run()).toMatchObject({
      status: "waiting_for_input", pending_question: "Ship it?", started_at: t(0), ended_at: null,
      agent_name: "planner", framework: "langgraph", config_version: 3, event_count: 3, last_event_at: t(2),
    });
    const runs = new Map();
    await applyEvents([statusMachine()], [
      testEvent({ event_type: "run_start", occurred_at: t(0) }),
      testEvent({ event_type: "human_input_requested", occurred_at: t(2), payload: { question: "Ship it?" } }),
      testEvent({ event_type: "human_input_received", occurred_at: t(3), payload: { response: "yes" } }),
    ], runs);
    expect(runs.get("1:run-1").run).toMatchObject({ status: "running", pending_question: "" });
    const { run: after } = await applyEvents([statusMachine()], [testEvent({ event_type: "run_end", occurred_at: t(5) })], runs);
    expect(after()).toMatchObject({ status: "success", ended_at: t(5), event_count: 4, started_at: t(0) });
  });

  it("a resent run_start (an OTLP export's, with a later time) neither reopens a finished run nor renames it, but can move its start earlier", async () => {
    const { run } = await applyEvents([statusMachine()], [
      testEvent({ event_type: "run_start", occurred_at: t(1), agent_name: "researcher" }),
      testEvent({ event_type: "run_end", occurred_at: t(5) }),
      testEvent({ event_type: "run_start", occurred_at: t(6), agent_name: "support-service", duplicate: true }),
      testEvent({ event_type: "run_start", occurred_at: t(0), agent_name: "support-service", duplicate: true }),
    ]);
    expect(run()).toMatchObject({ status: "success", ended_at: t(5), agent_name: "researcher", started_at: t(0), event_count: 2 });
  });

  it("a replayed run_start names a run stored without its agent (its later events were stored first)", async () => {
    // The run's later events came first from the other log lane; the process died after storing the run_start's
    // event but before the run's version with it, so the replayed run_start is a duplicate of a cold run.
    const { run } = await applyEvents([statusMachine()], [
      testEvent({ event_type: "step", occurred_at: t(2), payload: { node_name: "plan", phase: "start" } }),
      testEvent({ event_type: "run_start", occurred_at: t(1), agent_name: "planner", payload: { framework: "f" }, duplicate: true }),
    ]);
    expect(run()).toMatchObject({ status: "running", agent_name: "planner", framework: "f", started_at: t(1) });
  });

  it("a copy of the run_start dated earlier moves the start of 'running' back, so the root's run_end still ends the run", async () => {
    // OTLP: a child span's export (its run_start dated by that child's start, after the root's end by the exporter's
    // clock) is processed before the root's export; the root's export carries the run_start dated by the root.
    const { run } = await applyEvents([statusMachine()], [
      testEvent({ event_type: "run_start", occurred_at: t(6) }),
      testEvent({ event_type: "step", occurred_at: t(6), payload: { node_name: "chat", phase: "end" } }),
      testEvent({ event_type: "run_start", occurred_at: t(2), duplicate: true }),
      testEvent({ event_type: "run_end", occurred_at: t(5) }),
    ]);
    expect(run()).toMatchObject({ status: "success", started_at: t(2), ended_at: t(5), event_count: 3 });
    // A later turn's start (another run_start) is not a copy: an older, late run_end still cannot end that turn.
    const { run: turns } = await applyEvents([statusMachine()], [
      testEvent({ event_type: "run_start", occurred_at: t(0) }),
      testEvent({ event_type: "run_start", occurred_at: t(8) }),
      testEvent({ event_type: "run_end", occurred_at: t(5) }),
    ]);
    expect(turns()).toMatchObject({ status: "running", started_at: t(0), status_at: t(8) });
  });

  it("ends in error with the error counted and its message kept", async () => {
    const { run } = await applyEvents([statusMachine()], [
      testEvent({ event_type: "run_start", occurred_at: t(0) }),
      testEvent({ event_type: "error", occurred_at: t(4), payload: { error_type: "Timeout", error_message: "tool timed out" } }),
    ]);
    expect(run()).toMatchObject({ status: "error", error_count: 1, last_error: "tool timed out", ended_at: t(4) });
  });

  it("never moves the status back because of an event that happened earlier (out-of-order rule)", async () => {
    const { run } = await applyEvents([statusMachine()], [
      testEvent({ event_type: "run_start", occurred_at: t(0) }),
      testEvent({ event_type: "run_end", occurred_at: t(10) }),
      // Delivered late, but it happened before the run ended: stored and counted, status unchanged.
      testEvent({ event_type: "human_input_received", occurred_at: t(5), payload: { response: "ok" } }),
      testEvent({ event_type: "step", occurred_at: t(6), payload: { node_name: "x", phase: "end" } }),
    ]);
    expect(run()).toMatchObject({ status: "success", status_at: t(10), ended_at: t(10), event_count: 4, last_event_at: t(10) });
  });

  it("lets a later event win, with ties going to log order", async () => {
    const { run } = await applyEvents([statusMachine()], [
      testEvent({ event_type: "run_start", occurred_at: t(0) }),
      testEvent({ event_type: "human_input_requested", occurred_at: t(3), payload: { question: "?" } }),
      testEvent({ event_type: "human_input_received", occurred_at: t(3), payload: { response: "!" } }),
    ]);
    expect(run()).toMatchObject({ status: "running", pending_question: "" });
  });

  it("starts a run whose first event is not run_start as running, and takes the earliest run_start", async () => {
    const { run } = await applyEvents([statusMachine()], [
      testEvent({ event_type: "step", occurred_at: t(2), payload: { node_name: "a", phase: "start" } }),
      testEvent({ event_type: "run_start", occurred_at: t(1), agent_name: "late-start" }),
    ]);
    expect(run()).toMatchObject({ status: "running", started_at: t(1), agent_name: "late-start", event_count: 2 });
  });

  it("does not count duplicates twice but still applies their (idempotent) status", async () => {
    const start = testEvent({ event_type: "run_start", occurred_at: t(0) });
    const { run } = await applyEvents([statusMachine()], [start, { ...start, duplicate: true }]);
    expect(run()).toMatchObject({ event_count: 1, status: "running" });
  });
});

describe("status-machine: the run's attributes and previews", () => {
  it("tags are the union, metadata the latest per key, end_user/environment/release the latest non-empty, across events and parts", async () => {
    const runs = new Map();
    await applyEvents([statusMachine()], [
      testEvent({ event_type: "run_start", occurred_at: t(0), tags: ["vip"], metadata: { customer: "acme", tier: 1 }, end_user: "u1", environment: "staging", release: "v1", payload: { input: [{ role: "system", content: "Be brief." }, { role: "user", content: "Refund order 42?" }] } }),
      testEvent({ event_type: "step", occurred_at: t(1), tags: ["beta", "vip"], metadata: { tier: 2, trial: true }, payload: { node_name: "a", phase: "start" } }),
    ], runs);
    const { run } = await applyEvents([statusMachine()], [
      testEvent({ event_type: "step", occurred_at: t(2), end_user: "u2", environment: "production", payload: { node_name: "a", phase: "end" } }),
      // A replayed event still folds: a run loaded after a failed attempt lacks what its stored events said.
      testEvent({ event_type: "tool_call", occurred_at: t(3), tags: ["alpha"], duplicate: true, payload: { tool_name: "x", phase: "end" } }),
      testEvent({ event_type: "run_end", occurred_at: t(4), payload: { output: { answer: "Refunded." } } }),
    ], runs);
    expect(run()).toMatchObject({
      tags: ["alpha", "beta", "vip"], metadata: { customer: '"acme"', tier: "2", trial: "true" }, end_user: "u2", environment: "production", release: "v1",
      input_preview: "Refund order 42?", output_preview: '{"answer":"Refunded."}',
    });
  });

  it("the input preview is the first run_start's with an input; the output preview the latest run_end's with an output", async () => {
    const { run } = await applyEvents([statusMachine()], [
      testEvent({ event_type: "run_start", occurred_at: t(0), payload: {} }),
      testEvent({ event_type: "run_start", occurred_at: t(1), payload: { input: "first" }, duplicate: true }),
      testEvent({ event_type: "run_start", occurred_at: t(2), payload: { input: "second" } }),
      testEvent({ event_type: "run_end", occurred_at: t(3), payload: { output: "one" } }),
      testEvent({ event_type: "run_end", occurred_at: t(4), payload: {} }),
      testEvent({ event_type: "run_end", occurred_at: t(5), payload: { output: "two" } }),
    ]);
    expect(run()).toMatchObject({ input_preview: "first", output_preview: "two" });
  });
});

import { Either } from "effect";
import { describe, expect, it } from "vitest";
import { parseIngestEvent } from "./schema.js";

const ok = (input: unknown) => {
  const r = parseIngestEvent(input);
  if (Either.isLeft(r)) throw new Error(`expected valid, got ${r.left.message}`);
  return r.right;
};
const fieldOf = (input: unknown) => {
  const r = parseIngestEvent(input);
  if (Either.isRight(r)) throw new Error("expected a validation error");
  return { field: r.left.field, message: r.left.message };
};

describe("parseIngestEvent", () => {
  it("accepts each of the seven event types with their payloads", () => {
    const cases = [
      { event_type: "run_start", agent_name: "a", payload: { framework: "langgraph", input: { q: 1 } } },
      { event_type: "run_end", payload: { output: {}, prompt_tokens: 1, completion_tokens: 2, total_tokens: 3, cost_usd: 0.01, model: "gpt-4o" } },
      { event_type: "error", payload: { error_type: "ValueError", error_message: "x", traceback: "tb" } },
      { event_type: "step", payload: { node_name: "plan", phase: "start", duration_ms: 0, output: {} } },
      { event_type: "tool_call", payload: { tool_name: "search", phase: "end", input_preview: "i", output_preview: "o", duration_ms: 5 } },
      { event_type: "human_input_requested", payload: { question: "ok?", context: { a: 1 }, channel: "dashboard" } },
      { event_type: "human_input_received", payload: { response: "yes", responded_by: "ann" } },
    ];
    for (const c of cases) expect(ok({ sdk_run_id: "r1", ...c }).event_type).toBe(c.event_type);
  });

  it("keeps unknown payload fields", () => {
    expect(ok({ event_type: "step", sdk_run_id: "r", payload: { node_name: "n", phase: "end", extra: [1] } }).payload.extra).toEqual([1]);
  });

  it("names the field that is wrong", () => {
    expect(fieldOf({ sdk_run_id: "r", payload: {} }).field).toBe("event_type");
    expect(fieldOf({ event_type: "nope", sdk_run_id: "r", payload: {} }).field).toBe("event_type");
    expect(fieldOf({ event_type: "step", payload: {} }).field).toBe("sdk_run_id");
    expect(fieldOf({ event_type: "step", sdk_run_id: "", payload: {} }).field).toBe("sdk_run_id");
    expect(fieldOf({ event_type: "step", sdk_run_id: "r" }).field).toBe("payload");
    expect(fieldOf({ event_type: "step", sdk_run_id: "r", payload: [] }).field).toBe("payload");
    expect(fieldOf({ event_type: "step", sdk_run_id: "r", payload: { node_name: "n", phase: "middle" } }).field).toBe("payload.phase");
    expect(fieldOf({ event_type: "step", sdk_run_id: "r", payload: { phase: "start" } }).field).toBe("payload.node_name");
    expect(fieldOf({ event_type: "run_end", sdk_run_id: "r", payload: { total_tokens: 1.5 } }).field).toBe("payload.total_tokens");
    expect(fieldOf({ event_type: "run_end", sdk_run_id: "r", payload: { cost_usd: -1 } }).field).toBe("payload.cost_usd");
    expect(fieldOf({ event_type: "step", sdk_run_id: "r", occurred_at: "yesterday", payload: { node_name: "n", phase: "end" } }).field).toBe("occurred_at");
    expect(fieldOf({ event_type: "human_input_received", sdk_run_id: "r", payload: {} }).field).toBe("payload.response");
  });

  it("requires agent_name with run_start only", () => {
    expect(fieldOf({ event_type: "run_start", sdk_run_id: "r", payload: {} })).toEqual({ field: "agent_name", message: "agent_name is required with run_start" });
    expect(ok({ event_type: "run_end", sdk_run_id: "r", payload: {} }).agent_name).toBeUndefined();
  });

  it("rejects non-objects without throwing", () => {
    for (const bad of [null, 3, "x", [], undefined]) expect(Either.isLeft(parseIngestEvent(bad))).toBe(true);
  });

  it("accepts timestamps with offsets and validates event_id as a UUID", () => {
    expect(ok({ event_type: "step", sdk_run_id: "r", occurred_at: "2026-11-23T10:00:00+02:00", payload: { node_name: "n", phase: "end" } }).occurred_at).toBe("2026-11-23T10:00:00+02:00");
    expect(fieldOf({ event_type: "step", sdk_run_id: "r", event_id: "x", payload: { node_name: "n", phase: "end" } }).field).toBe("event_id");
  });
});

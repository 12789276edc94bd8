/** buildSpans: pairing by span id in any processing order, legacy pairing by name, lone end events, orphans. */
import { describe, expect, it } from "vitest";
import type { StoredEvent } from "../ports/event-store.js";
import { buildSpans } from "./spans.js";

let n = 0;
const at = (ms: number) => new Date(Date.UTC(2026, 10, 24, 9) + ms).toISOString();
const ev = (ms: number, type: "step" | "tool_call", payload: Record<string, unknown>, span = "", parent = ""): StoredEvent => ({
  event_id: `00000000-0000-7000-8000-${String(++n).padStart(12, "0")}`, run_id: "r", sdk_run_id: "s", event_type: type, agent_name: "",
  payload, occurred_at: at(ms), received_at: at(ms), config_version: null, span_id: span, parent_span_id: parent,
});

describe("buildSpans", () => {
  it("pairs start and end by span id whichever was processed first", () => {
    const start = ev(0, "step", { kind: "llm", node_name: "chat", phase: "start", input: { q: "hi" } }, "l1", "a1");
    const end = ev(400, "step", { kind: "llm", node_name: "chat", phase: "end", model: "gpt-4o", prompt_tokens: 10, completion_tokens: 2 }, "l1", "a1");
    const parent = ev(0, "step", { node_name: "agent", phase: "start" }, "a1");
    for (const order of [[parent, start, end], [end, parent, start]]) {
      const spans = buildSpans(order);
      expect(spans.map((s) => s.span_id)).toEqual(["a1", "l1"]);
      expect(spans[1]).toMatchObject({ parent_span_id: "a1", kind: "llm", started_at: at(0), ended_at: at(400), duration_ms: 400, input_preview: '{"q":"hi"}', total_tokens: 12, status: "ok" });
      expect(spans[0]).toMatchObject({ status: "running", ended_at: null });
    }
  });

  it("without span ids: a step end closes the latest open step of its name, a tool end the oldest call of its tool", () => {
    const spans = buildSpans([
      ev(0, "step", { node_name: "outer", phase: "start" }),
      ev(10, "tool_call", { tool_name: "search", phase: "start", input_preview: "a" }),
      ev(20, "tool_call", { tool_name: "search", phase: "start", input_preview: "b" }),
      ev(30, "tool_call", { tool_name: "search", phase: "end", output_preview: "A" }),
      ev(40, "tool_call", { tool_name: "search", phase: "end", output_preview: "B", error: "TimeoutError" }),
      ev(50, "step", { node_name: "outer", phase: "end", duration_ms: 50 }),
    ]);
    expect(spans.map((s) => [s.kind, s.name, s.input_preview, s.output_preview, s.status, s.duration_ms])).toEqual([
      ["step", "outer", null, null, "ok", 50],
      ["tool", "search", "a", "A", "ok", 20],
      ["tool", "search", "b", "B", "error", 20],
    ]);
  });

  it("a span sent only as its end event is complete; an unknown parent becomes the top", () => {
    const [s] = buildSpans([ev(1000, "step", { kind: "llm", node_name: "chat", phase: "end", duration_ms: 250 }, "x", "missing")]);
    expect(s).toMatchObject({ span_id: "x", parent_span_id: null, started_at: at(750), ended_at: at(1000), duration_ms: 250, status: "ok" });
  });
});

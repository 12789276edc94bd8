import { describe, expect, it } from "vitest";
import type { StoredEvent } from "../../core/ports/event-store.js";
import { buildTimeline } from "./timeline.js";

let n = 0;
const ev = (ms: number, event_type: StoredEvent["event_type"], payload: Record<string, unknown> = {}): StoredEvent => ({
  event_id: `e${++n}`, run_id: "r", sdk_run_id: "s", event_type, agent_name: "a", payload,
  occurred_at: new Date(Date.UTC(2026, 10, 23, 10) + ms).toISOString(), received_at: "", config_version: null, span_id: "", parent_span_id: "",
});

describe("buildTimeline", () => {
  it("pairs step and tool_call start/end into spans, nests, and keeps points", () => {
    const { items, total_ms } = buildTimeline([
      ev(0, "run_start"),
      ev(10, "step", { node_name: "plan", phase: "start" }),
      ev(20, "tool_call", { tool_name: "search", phase: "start" }),
      ev(30, "tool_call", { tool_name: "search", phase: "start" }),
      ev(120, "tool_call", { tool_name: "search", phase: "end", duration_ms: 100 }),
      ev(150, "tool_call", { tool_name: "search", phase: "end" }),
      ev(200, "step", { node_name: "plan", phase: "end" }),
      ev(210, "human_input_requested", { question: "ok?" }),
      ev(1210, "human_input_received", { response: "yes" }),
      ev(1300, "run_end"),
    ]);
    expect(items.map((i) => [i.event_type, i.kind, i.depth, i.duration_ms])).toEqual([
      ["run_start", "point", 0, null],
      ["step", "span", 0, 190],
      ["tool_call", "span", 1, 100], // the client's duration_ms wins
      ["tool_call", "span", 2, 120], // FIFO: the second start pairs with the second end
      ["human_input_requested", "point", 0, null],
      ["human_input_received", "point", 0, null],
      ["run_end", "point", 0, null],
    ]);
    expect(items[5]!.wait_ms).toBe(1000);
    expect(total_ms).toBe(1300);
    expect(items[1]!.offset_ms).toBe(10);
  });

  it("keeps an unfinished span open and an orphan end as its own span", () => {
    const { items } = buildTimeline([
      ev(0, "step", { node_name: "a", phase: "start" }),
      ev(50, "tool_call", { tool_name: "t", phase: "end", duration_ms: 40 }),
    ], { live: false });
    expect(items[0]).toMatchObject({ open: true, duration_ms: null });
    expect(items[1]).toMatchObject({ kind: "span", open: false, duration_ms: 40, offset_ms: 10 });
  });
});

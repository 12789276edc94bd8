import { describe, expect, it } from "vitest";
import type { StoredEvent } from "../../core/ports/event-store.js";
import { ValidationError } from "../../core/errors.js";
import { buildSpans } from "../../core/events/spans.js";
import { cursorOf, liveDelta, parseSince, type SinceQuery } from "./run-delta.js";
import { buildSpanTree } from "./span-tree.js";
import { buildTimeline } from "./timeline.js";

const T0 = Date.UTC(2026, 0, 5, 10);
let seq = 0;
/** Event ids as the store mints them: UUIDv7-shaped, ordered as text. */
const id = (i: number) => `01900000-0000-7000-8000-${String(i).padStart(12, "0")}`;
const ev = (ms: number, event_type: StoredEvent["event_type"], payload: Record<string, unknown>, span = "", parent = ""): StoredEvent => ({
  event_id: id(++seq), run_id: "r", sdk_run_id: "s", event_type, agent_name: "a", payload,
  occurred_at: new Date(T0 + ms).toISOString(), received_at: "", config_version: null, span_id: span, parent_span_id: parent,
});
const step = (ms: number, phase: "start" | "end", span: string, parent = "", extra: Record<string, unknown> = {}) =>
  ev(ms, "step", { node_name: span, phase, ...extra }, span, parent);

/** The views of a run page made from these events, as run.ts makes them. */
const view = (events: StoredEvent[], live = true) => ({ timeline: buildTimeline(events, { live }), tree: buildSpanTree(buildSpans(events), { live }) });
const since = (events: StoredEvent[], status = "running"): SinceQuery => ({ ...cursorOf(events), status });
const delta = (shown: StoredEvent[], all: StoredEvent[], status = "running") =>
  liveDelta(since(shown, status), { status: "running" }, { events: all, spanEvents: all, live: true }, view(all));

describe("what a live run page is sent", () => {
  it("sends the items and spans that changed and the new ones: an ended span, its parent's totals, a new child", () => {
    const shown = [
      ev(0, "run_start", {}),
      step(1, "start", "agent"),
      step(2, "start", "plan", "agent"),
      step(5, "end", "plan", "agent"),
      step(6, "start", "llm-1", "agent", { kind: "llm" }),
    ];
    const later = [
      step(9, "end", "llm-1", "agent", { kind: "llm", model: "gpt-4o-mini", prompt_tokens: 10, completion_tokens: 2 }),
      step(10, "start", "tool", "agent"),
    ];
    const d = delta(shown, [...shown, ...later])!;
    expect(d.timeline.full).toBe(false);
    if (d.timeline.full || d.tree.full) throw new Error("expected a delta");
    expect(d.timeline.changed.map((i) => i.name)).toEqual(["llm-1"]); // its end arrived
    expect(d.timeline.added.map((i) => i.name)).toEqual(["tool"]);
    expect(d.tree.parts.map((p) => [p.node.span.span_id, p.mode, p.parent])).toEqual([
      ["agent", "replace", null], // its subtree's tokens changed
      ["llm-1", "replace", "agent"],
      ["tool", "insert", "agent"],
    ]);
    expect(d.tree.parts[2]!.before).toBeNull();
  });

  it("sends nothing but the small parts when no item changed", () => {
    const shown = [ev(0, "run_start", {}), step(1, "start", "agent")];
    const d = delta(shown, shown)!;
    expect(d).toEqual({ timeline: { full: false, changed: [], added: [] }, tree: { full: false, parts: [] } });
  });

  it("adds a new span under its parent with its new children inside its rendering", () => {
    const a = step(0, "start", "root");
    const b = step(3, "start", "b", "root");
    const shown = [a, b];
    const all = [...shown, step(4, "start", "c", "root"), step(5, "start", "c1", "c")];
    const d = delta(shown, all)!;
    if (d.tree.full) throw new Error("expected a delta");
    expect(d.tree.parts.map((p) => [p.node.span.span_id, p.mode, p.before])).toEqual([["c", "insert", null]]);
    expect(d.tree.parts[0]!.node.children.map((c) => c.span.span_id)).toEqual(["c1"]);
  });

  it("sends the page whole after an event stored late below the cursor, or a status change", () => {
    const start = ev(0, "run_start", {});
    const late = step(1, "start", "plan"); // minted before the next event, stored after the page was rendered
    const next = step(2, "start", "review");
    const after = step(3, "end", "review");
    const shown = [start, next];
    const all = [start, late, next, after];
    expect(liveDelta(since(shown), { status: "running" }, { events: all, spanEvents: all, live: true }, view(all))).toBeNull();
    expect(delta(shown, [...shown, after])).not.toBeNull();
    expect(delta(shown, [...shown, after], "waiting_for_input")).toBeNull();
  });

  it("sends the trace whole when a span's parent arrives after it, or an earlier start moves every bar", () => {
    const shown = [step(5, "start", "child", "parent")];
    const d = delta(shown, [...shown, step(6, "start", "parent")])!;
    expect(d.tree.full).toBe(true);
    const earlier = delta(shown, [...shown, step(0, "start", "other")])!;
    expect(earlier.tree.full).toBe(true);
    expect(earlier.timeline.full).toBe(true);
  });

  it("refuses a malformed cursor with the parameter's name", () => {
    expect(parseSince({})).toBeNull();
    expect(parseSince({ since: id(3).toUpperCase(), n: "2", st: "running" })).toEqual({ cursor: id(3), n: 2, status: "running" });
    for (const [q, field] of [[{ since: "x", n: "1" }, "since"], [{ since: id(1), n: "-1" }, "n"], [{ since: id(1), n: "1e400" }, "n"], [{ since: id(1) }, "n"]] as const) {
      let err: unknown;
      try { parseSince(q); } catch (e) { err = e; }
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).field).toBe(field);
    }
  });
});

/**
 * The trace view's reads on chDB: the spans SQL pairs (one row per span) say what core/events/spans.ts says of the
 * same events — starts, ends, parents, names, kinds, errors, tokens, spans sent without ids, ends stored before their
 * starts, duplicates —; what changed after a cursor; the cursor's check; the text search.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { EventType, LoggedEvent } from "../../core/events/schema.js";
import { runIdFor, uuidv7 } from "../../core/ids.js";
import { openChdb } from "../../core/clickhouse/chdb.js";
import { migrateClickHouse } from "../../core/clickhouse/migrate.js";
import { buildSpans } from "../../core/events/spans.js";
import { skeletonOfSpan, type SpanSkeleton } from "../../core/events/span-skeleton.js";
import { buildSkeleton, orderedSkeletons } from "../../web/runs/trace-skeleton.js";
import { createEventStore } from "./event-store.js";
import { searchRunText, spanCursor, spanCursorHolds, spanSkeletonRows, spanSkeletonRowsAfter } from "./trace-rows.js";

let dir = "";
let ch: ClickHouse;
const PROJECT = 7;
const t0 = Date.UTC(2026, 10, 1, 9);

function ev(sdkRunId: string, type: EventType, payload: Record<string, unknown>, ms: number, span?: string, parent?: string, id = uuidv7()): LoggedEvent {
  return {
    event_id: id, project_id: PROJECT, user_id: PROJECT, run_id: runIdFor(PROJECT, sdkRunId), sdk_run_id: sdkRunId, event_type: type,
    agent_name: null, payload, occurred_at: new Date(t0 + ms).toISOString(), received_at: new Date().toISOString(), config_version: null,
    ...(span ? { span_id: span } : {}), ...(parent ? { parent_span_id: parent } : {}),
  };
}

const byId = (spans: SpanSkeleton[]) => Object.fromEntries(spans.map(({ depth: _, ...s }) => [s.span_id, s]));

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "runwatch-skeleton-test-"));
  ch = await openChdb(dir, "runwatch");
  await migrateClickHouse(ch);
});
afterAll(async () => {
  await ch?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("span skeletons", () => {
  it("one row per span says what buildSpans says of the same events", async () => {
    const run = "skeleton-parity";
    const e = (type: EventType, payload: Record<string, unknown>, ms: number, span?: string, parent?: string) => ev(run, type, payload, ms, span, parent);
    const endBeforeStart = e("step", { node_name: "late start", phase: "end", duration_ms: 30 }, 330, "o1");
    const events = [
      e("run_start", { input: "hello" }, 0),
      e("step", { node_name: "agent", phase: "start", input: { q: "x".repeat(5_000) } }, 1, "s1"),
      e("step", { kind: "llm", node_name: "chat", phase: "start", input: [{ role: "user", content: "hi" }] }, 10, "l1", "s1"),
      e("step", { kind: "llm", node_name: "chat", phase: "end", model: "gpt-4o", provider: "openai", prompt_tokens: 100, completion_tokens: 20, cost_usd: 0.01, output: "ok" }, 60, "l1", "s1"),
      e("tool_call", { tool_name: "search", phase: "start", input_preview: "q" }, 70, "t1", "s1"),
      e("tool_call", { tool_name: "search", phase: "end", error: { error_type: "Timeout", error_message: "slow" } }, 90, "t1", "s1"),
      e("step", { kind: "llm", node_name: "end only", phase: "end", duration_ms: 40, prompt_tokens: 7, error: "" }, 200, "e1", "s1"),
      e("step", { kind: "llm", node_name: "totals", phase: "end", total_tokens: 99, prompt_tokens: 1, error: false }, 210, "e2", "s1"),
      e("step", { node_name: "running", phase: "start" }, 300, "r1", "s1"),
      endBeforeStart,
      e("step", { node_name: "late start", phase: "start" }, 300, "o1"),
      e("step", { node_name: "parent on end", phase: "start" }, 400, "p1"),
      e("step", { node_name: "parent on end", phase: "end", error: "boom" }, 450, "p1", "s1"),
      e("step", { node_name: "first", phase: "start", kind: "retrieval" }, 500, "d1", "s1"),
      e("step", { node_name: "second", phase: "start", kind: "agent" }, 505, "d1", "s1"),
      e("step", { node_name: "first", phase: "end", duration_ms: 9 }, 510, "d1", "s1"),
      e("step", { node_name: "orphan", phase: "end" }, 520, "g1", "ghost"),
      e("step", { node_name: "loop a", phase: "end" }, 530, "c1", "c2"),
      e("step", { node_name: "loop b", phase: "end" }, 531, "c2", "c1"),
      e("step", { node_name: 'q"uote\n', phase: "start" }, 540, 'id "quoted",\n', "s1"),
      e("step", { node_name: "nulled error", phase: "end", error: null }, 545, "n1", "s1"),
      e("step", { node_name: "plan", phase: "start" }, 600),
      e("step", { node_name: "plan", phase: "end", output: "done" }, 650),
      e("tool_call", { tool_name: "lookup", phase: "end", duration_ms: 5 }, 660),
      e("step", { node_name: "agent", phase: "end", duration_ms: 700 }, 701, "s1"),
      e("run_end", { output: "bye" }, 710),
    ];
    await createEventStore(ch).insertEvents(events);
    const runId = runIdFor(PROJECT, run);
    const store = createEventStore(ch);
    const want = buildSpans(await store.listSpanEvents(PROJECT, runId), { keepParents: true }).map(skeletonOfSpan);
    const read = await spanSkeletonRows(ch, PROJECT, runId);
    expect(read.unpaired).toHaveLength(3);
    const got = orderedSkeletons(read).spans;
    expect(byId(got)).toEqual(byId(want));
    expect(byId(got).o1).toMatchObject({ started_at: new Date(t0 + 300).toISOString(), duration_ms: 30, status: "ok" });
    expect(byId(got).e1).toMatchObject({ started_at: new Date(t0 + 160).toISOString(), status: "ok", tokens: 7 });
    expect(byId(got).t1!.status).toBe("error");
    expect(byId(got).d1).toMatchObject({ name: "first", kind: "retrieval" });
    expect(byId(got).n1!.status).toBe("ok");
    // Start order (ties: processing order), kept across the answer's rows however few spans each holds.
    const starts = read.spans.map((s) => Date.parse(s.started_at));
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    // Both start at 300; o1's first event (its end, minted before the others) was processed first.
    expect(read.spans.findIndex((s) => s.span_id === "o1")).toBeLessThan(read.spans.findIndex((s) => s.span_id === "r1"));
    for (const perRow of [1, 2, 5]) expect((await spanSkeletonRows(ch, PROJECT, runId, perRow)).spans).toEqual(read.spans);

    // In tree order: each span before its subtree; the orphan and one span of the loop are roots.
    const sk = await buildSkeleton(read, await spanCursor(ch, PROJECT, runId));
    const pos = (id: string) => sk.spans.findIndex((s) => s.span_id === id);
    expect(sk.spans[pos("l1")]!.depth).toBe(1);
    expect(pos("s1")).toBeLessThan(pos("l1"));
    expect(sk.spans[pos("g1")]!.depth).toBe(0);
    expect([sk.spans[pos("c1")]!.depth, sk.spans[pos("c2")]!.depth].sort()).toEqual([0, 1]);
    expect(sk.spans).toHaveLength(want.length);
    // A span sent without an id is found by its events.
    const plan = want.find((s) => s.name === "plan")!;
    expect(sk.eventsOfSpan.get(plan.span_id)).toHaveLength(2);
  });

  it("reads what changed after a cursor, and knows when the events up to it are not what they were", async () => {
    const run = "skeleton-changes";
    const runId = runIdFor(PROJECT, run);
    const store = createEventStore(ch);
    const early = uuidv7(); // minted now, stored later: an event whose id is below the cursor
    await store.insertEvents([
      ev(run, "step", { node_name: "a", phase: "start" }, 0, "a"),
      ev(run, "step", { node_name: "b", phase: "start" }, 1, "b", "a"),
      ev(run, "step", { node_name: "b", phase: "end" }, 2, "b", "a"),
    ]);
    const cursor = await spanCursor(ch, PROJECT, runId);
    expect(cursor.n).toBe(3);
    expect(await spanCursorHolds(ch, PROJECT, runId, cursor)).toBe(true);
    expect(await spanSkeletonRowsAfter(ch, PROJECT, runId, cursor.cursor)).toEqual({ spans: [], unpaired: false });

    await store.insertEvents([ev(run, "step", { node_name: "a", phase: "end" }, 10, "a"), ev(run, "tool_call", { tool_name: "c", phase: "start" }, 11, "c", "a")]);
    const after = await spanSkeletonRowsAfter(ch, PROJECT, runId, cursor.cursor);
    expect(after.unpaired).toBe(false);
    expect(after.spans.map((s) => s.span_id)).toEqual(["a", "c"]);
    expect(after.spans[0]).toMatchObject({ name: "a", status: "ok", duration_ms: 10, started_at: new Date(t0).toISOString() });
    expect(after.spans[1]).toMatchObject({ kind: "tool", status: "running", parent_span_id: "a", duration_ms: null });
    expect(await spanCursorHolds(ch, PROJECT, runId, cursor)).toBe(true);

    await store.insertEvents([ev(run, "step", { node_name: "late", phase: "end" }, 3, "late", "a", early)]);
    expect(await spanCursorHolds(ch, PROJECT, runId, cursor)).toBe(false);
    await store.insertEvents([ev(run, "step", { node_name: "legacy", phase: "start" }, 20)]);
    expect((await spanSkeletonRowsAfter(ch, PROJECT, runId, cursor.cursor)).unpaired).toBe(true);
  });

  it("searches the payloads case-insensitively: spans by id, spans sent without one by event, the run's own events", async () => {
    const run = "skeleton-search";
    const runId = runIdFor(PROJECT, run);
    const legacy = ev(run, "tool_call", { tool_name: "lookup", phase: "end", output_preview: "Found the ZEBRA" }, 5);
    await createEventStore(ch).insertEvents([
      ev(run, "run_start", { input: "a zebra question" }, 0),
      ev(run, "step", { node_name: "n", phase: "start", input: "zebras" }, 1, "z1"),
      ev(run, "step", { node_name: "n", phase: "end", output: "more Zebra" }, 2, "z1"),
      ev(run, "step", { node_name: "other", phase: "end" }, 3, "o1"),
      legacy,
    ]);
    const found = await searchRunText(ch, PROJECT, runId, "zEbRa", 10);
    expect(found.run).toBe(true);
    // In processing order (the legacy event's id was minted first).
    expect(found.spans).toEqual([{ span_id: "", event_id: legacy.event_id }, { span_id: "z1", event_id: "" }]);
    expect((await searchRunText(ch, PROJECT, runId, "nothing like it", 10)).spans).toEqual([]);
  });
});

/**
 * Run versions held back within a log batch (deferred-runs.ts): the bookkeeping, and the batch processor on a real
 * chDB writing a run spread over parts once per batch, what must not wait at once, and what a failed part leaves
 * exact.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventStore } from "../core/clickhouse/types.js";
import { newRunRecord } from "../core/events/run.js";
import type { LoggedEvent } from "../core/events/schema.js";
import { runIdFor } from "../core/ids.js";
import { encodeEvents } from "../core/events/wire.js";
import { DeferredRuns, runShape } from "./deferred-runs.js";
import { createRecordHandler } from "./record-handler.js";
import type { CachedRun } from "./run-cache.js";
import { processorHarness, quiet as quietLogger, type ProcessorHarness } from "./testing/processor-harness.js";

const entry = (id: string): CachedRun => ({ run: newRunRecord(1, id, runIdFor(1, id), "2026-11-26T10:00:00.000Z"), fresh: false });

describe("DeferredRuns", () => {
  it("holds runs until taken, lets go of those written, and keeps what was held again meanwhile", () => {
    const d = new DeferredRuns();
    expect(d.empty).toBe(true);
    const a = entry("a"), b = entry("b");
    d.hold("1:a", a);
    d.hold("1:b", b);
    const bHeld = d.holding("1:b")!;
    d.hold("1:b", b); // held again by a later part: the earlier holding's write does not end it
    d.release("1:b", bHeld);
    expect(d.entry("1:b")).toBe(b);
    d.release("1:b", d.holding("1:b")!); // b's newest state went out with its part
    expect(d.entry("1:a")).toBe(a);
    expect(d.entry("1:b")).toBeUndefined();
    const taken = d.take();
    expect(taken.held).toEqual([a]);
    const a2 = entry("a");
    d.hold("1:a", a2); // held again while the write is under way
    taken.written();
    expect(d.entry("1:a")).toBe(a2);
    d.take().written();
    expect(d.empty).toBe(true);
  });

  it("turns a held run whose part failed into one to reconcile, once", () => {
    const d = new DeferredRuns();
    d.hold("1:a", entry("a"));
    d.hold("1:b", entry("b"));
    d.forget("1:a");
    d.forget("1:zzz"); // never held: nothing to reconcile
    expect(d.entry("1:a")).toBeUndefined();
    expect(d.take().reconcile).toEqual([{ user_id: 1, external_id: "a", run_id: runIdFor(1, "a") }]);
    expect(d.reconcile("1:a")).toBe(true); // a part loaded it again: recounted there
    expect(d.reconcile("1:a")).toBe(false);
    d.forgetAll();
    expect(d.take().reconcile.map((r) => r.external_id)).toEqual(["b"]);
  });

  it("tells a change of counters from a change a reader must see at once", () => {
    const run = entry("a").run;
    const shape = runShape(run);
    Object.assign(run, { event_count: 9, error_count: 1, llm_calls: 2, total_tokens: 50, cost_usd: 0.1, last_event_at: "2026-11-26T11:00:00.000Z" });
    expect(runShape(run)).toBe(shape);
    for (const change of [{ status: "waiting_for_input" }, { model: "gpt-4o" }, { agent_name: "x" }, { last_error: "boom" }, { session_id: "s" }, { started_at: "2026-11-26T09:00:00.000Z" }] as const) {
      expect(runShape({ ...run, ...change })).not.toBe(shape);
    }
  });
});

describe("the batch processor holding run versions back (chDB)", () => {
  let h: ProcessorHarness;
  beforeAll(async () => {
    h = await processorHarness("deferred-runs");
  });
  afterAll(async () => {
    await h?.close();
  });

  /** The event store, whose runs' writes fail while `down` (the events' inserts go through). */
  const runsWriteFailing = () => {
    const failing = {
      down: false,
      store: {
        ...h.store,
        upsertRuns: async (runs, costs) => {
          if (failing.down) throw new Error("ClickHouse went away (test)");
          await h.store.upsertRuns(runs, costs);
        },
      } as EventStore,
    };
    return failing;
  };

  /** Every stored version of the run (not folded): what the parts wrote. */
  const versions = async (user: number, run: string) =>
    h.ports.clickhouse.query<{ status: string; event_count: number }>(
      "SELECT status, event_count FROM agent_runs WHERE user_id = {u:UInt64} AND external_id = {r:String} ORDER BY version",
      { u: user, r: run },
    );

  it("writes a run spread over a batch's parts once per change a reader must see, and its counters at the batch's end", async () => {
    const user = await h.createUser();
    const processor = await h.processorWith(h.ports.clickhouse, h.store);
    await processor.storedRunsRead();
    const step = (n: number) => h.event(user, "spread", "step", { node_name: `s${n}`, phase: "end", kind: "tool" });
    processor.deferRunWrites(true);
    await processor([h.event(user, "spread", "run_start", { framework: "test" }), step(1)]); // new: written
    await processor([step(2)]); // counters only: held
    await processor([step(3), step(4)]); // held
    expect(await versions(user, "spread")).toEqual([{ status: "running", event_count: 2 }]);
    await processor([h.event(user, "spread", "human_input_requested", { question: "ok?" })]); // status: written at once
    await processor([step(5)]); // held
    processor.deferRunWrites(false);
    await processor.flushDeferredRuns();
    expect(await versions(user, "spread")).toEqual([
      { status: "running", event_count: 2 },
      { status: "waiting_for_input", event_count: 6 },
      { status: "waiting_for_input", event_count: 7 },
    ]);
    // Nothing held: the next flush writes nothing; an ending run is written with its part.
    await processor.flushDeferredRuns();
    processor.deferRunWrites(true);
    await processor([h.event(user, "spread", "run_end", {})]);
    processor.deferRunWrites(false);
    expect((await versions(user, "spread")).at(-1)).toEqual({ status: "success", event_count: 8 });
    await processor.flushDeferredRuns();
    expect(await versions(user, "spread")).toHaveLength(4);
  });

  it("keeps a run's counters exact when a part fails after an earlier part held its version back", async () => {
    const user = await h.createUser();
    const failing = runsWriteFailing();
    const processor = await h.processorWith(h.ports.clickhouse, failing.store);
    await processor.storedRunsRead();
    const step = (run: string, n: number) => h.event(user, run, "step", { node_name: `s${n}`, phase: "end", kind: "tool" });
    processor.deferRunWrites(true);
    await processor([h.event(user, "held", "run_start", {}), h.event(user, "other", "run_start", {})]);
    await processor([step("held", 1), step("held", 2), step("other", 1)]); // both held: 3 and 2 events stored
    // A part of "held" fails after its events are stored (its runs' write fails): the held state is dropped.
    failing.down = true;
    const failed: LoggedEvent[] = [step("held", 3), h.event(user, "held", "error", { error_message: "boom" })];
    await expect(processor(failed)).rejects.toThrow(/went away/);
    failing.down = false;
    // No later part loads "held" again: the batch's end recounts it from storage; "other" is written as held.
    processor.deferRunWrites(false);
    await processor.flushDeferredRuns();
    const runs = await h.store.loadRuns([{ user_id: user, external_id: "held" }, { user_id: user, external_id: "other" }]);
    const byId = new Map(runs.map((r) => [r.external_id, r]));
    expect(byId.get("held")).toMatchObject({ event_count: 5, error_count: 1, last_event_at: failed[1]!.occurred_at });
    expect(byId.get("other")).toMatchObject({ event_count: 2, error_count: 0 });
  });

  it("recounts a run whose held state was dropped when a later part loads it again", async () => {
    const user = await h.createUser();
    const failing = runsWriteFailing();
    const processor = await h.processorWith(h.ports.clickhouse, failing.store);
    await processor.storedRunsRead();
    const step = (n: number) => h.event(user, "again", "step", { node_name: `s${n}`, phase: "end", kind: "tool" });
    processor.deferRunWrites(true);
    await processor([h.event(user, "again", "run_start", {})]);
    await processor([step(1), step(2)]); // held: the stored row says 1 event
    failing.down = true;
    await expect(processor([step(3)])).rejects.toThrow(/went away/);
    failing.down = false;
    await processor([step(4)]); // loads "again" from storage (1 event): recounted, 5
    expect((await versions(user, "again")).at(-1)).toEqual({ status: "running", event_count: 5 });
    processor.deferRunWrites(false);
    await processor.flushDeferredRuns();
    expect((await versions(user, "again")).at(-1)).toEqual({ status: "running", event_count: 5 });
    expect((await h.store.loadRuns([{ user_id: user, external_id: "again" }]))[0]!.event_count).toBe(5);
  });

  it("writes every version at once while off (a log batch of one part)", async () => {
    const user = await h.createUser();
    const processor = await h.processorWith(h.ports.clickhouse, h.store);
    await processor.storedRunsRead();
    await processor([h.event(user, "off", "run_start", {})]);
    await processor([h.event(user, "off", "step", { node_name: "a", phase: "end" })]);
    expect((await versions(user, "off")).map((v) => v.event_count)).toEqual([1, 2]);
  });

  it("through the record handler: a log batch of several parts stores traces spread over them with fewer run versions, exact", async () => {
    const user = await h.createUser();
    // Three runs interleaved as exports spread traces: their events alternate, so every part of 4 touches each.
    const runs = ["ta", "tb", "tc"];
    const events: LoggedEvent[] = runs.map((r) => h.event(user, r, "run_start", { framework: "test" }));
    for (let n = 0; n < 4; n++) for (const r of runs) events.push(h.event(user, r, "tool_call", { tool_name: `t${n}`, phase: "end" }));
    for (const r of runs) events.push(h.event(user, r, "run_end", {}));
    const processor = await h.processorWith(h.ports.clickhouse, h.store);
    await processor.storedRunsRead();
    // One log batch of 18 events (as an OTLP export record expands to hundreds), stored in parts of 4.
    const handle = createRecordHandler(processor, h.ports, quietLogger, { maxEvents: 4 });
    await handle(encodeEvents(events));
    for (const r of runs) {
      const stored = await versions(user, r);
      // 5 parts touch each run: it is written when new and when it ends; what it held does not outlive the batch.
      // (The first part holds the three run_starts and ta's first tool call.)
      expect(stored).toEqual([{ status: "running", event_count: r === "ta" ? 2 : 1 }, { status: "success", event_count: 6 }]);
    }
    // A batch of one part holds nothing back.
    await handle(encodeEvents([h.event(user, "one", "run_start", {}), h.event(user, "one", "step", { node_name: "a", phase: "end" })]));
    expect(await versions(user, "one")).toEqual([{ status: "running", event_count: 2 }]);
  });
});

/**
 * Run versions held back within a log batch (run-writer.ts), through the part processor on a real chDB: a run
 * spread over parts written once per batch, what must not wait, and what a failed part leaves exact.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventStore } from "../core/clickhouse/types.js";
import type { LoggedEvent } from "../core/events/schema.js";
import { encodeEvents } from "../core/events/wire.js";
import { createRecordHandler } from "./record-handler.js";
import { processorHarness, quiet as quietLogger, type ProcessorHarness } from "./testing/processor-harness.js";

describe("the part processor holding run versions back (chDB)", () => {
  let h: ProcessorHarness;
  beforeAll(async () => {
    h = await processorHarness("held-versions");
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
    const batch = processor.logBatch();
    batch.severalParts();
    await batch.part([h.event(user, "spread", "run_start", { framework: "test" }), step(1)]); // new: written
    await batch.part([step(2)]); // counters only: held
    await batch.part([step(3), step(4)]); // held
    expect(await versions(user, "spread")).toEqual([{ status: "running", event_count: 2 }]);
    await batch.part([h.event(user, "spread", "human_input_requested", { question: "ok?" })]); // status: written at once
    await batch.part([step(5)]); // held
    await batch.finish();
    expect(await versions(user, "spread")).toEqual([
      { status: "running", event_count: 2 },
      { status: "waiting_for_input", event_count: 6 },
      { status: "waiting_for_input", event_count: 7 },
    ]);
    // Nothing held: the next finish writes nothing; an ending run is written with its part.
    await batch.finish();
    const next = processor.logBatch();
    next.severalParts();
    await next.part([h.event(user, "spread", "run_end", {})]);
    expect((await versions(user, "spread")).at(-1)).toEqual({ status: "success", event_count: 8 });
    await next.finish();
    expect(await versions(user, "spread")).toHaveLength(4);
  });

  it("keeps a run's counters exact when a part fails after an earlier part held its version back", async () => {
    const user = await h.createUser();
    const failing = runsWriteFailing();
    const processor = await h.processorWith(h.ports.clickhouse, failing.store);
    await processor.storedRunsRead();
    const step = (run: string, n: number) => h.event(user, run, "step", { node_name: `s${n}`, phase: "end", kind: "tool" });
    const batch = processor.logBatch();
    batch.severalParts();
    await batch.part([h.event(user, "held", "run_start", {}), h.event(user, "other", "run_start", {})]);
    await batch.part([step("held", 1), step("held", 2), step("other", 1)]); // both held: 3 and 2 events stored
    // A part of "held" fails after its events are stored (its runs' write fails): the held state is dropped.
    failing.down = true;
    const failed: LoggedEvent[] = [step("held", 3), h.event(user, "held", "error", { error_message: "boom" })];
    await expect(batch.part(failed)).rejects.toThrow(/went away/);
    failing.down = false;
    // No later part loads "held" again: the batch's end recounts it from storage; "other" is written as held.
    await batch.finish();
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
    const batch = processor.logBatch();
    batch.severalParts();
    await batch.part([h.event(user, "again", "run_start", {})]);
    await batch.part([step(1), step(2)]); // held: the stored row says 1 event
    failing.down = true;
    await expect(batch.part([step(3)])).rejects.toThrow(/went away/);
    failing.down = false;
    await batch.part([step(4)]); // loads "again" from storage (1 event): recounted, 5
    expect((await versions(user, "again")).at(-1)).toEqual({ status: "running", event_count: 5 });
    await batch.finish();
    expect((await versions(user, "again")).at(-1)).toEqual({ status: "running", event_count: 5 });
    expect((await h.store.loadRuns([{ user_id: user, external_id: "again" }]))[0]!.event_count).toBe(5);
  });

  it("writes every version at once in a log batch of one part", async () => {
    const user = await h.createUser();
    const processor = await h.processorWith(h.ports.clickhouse, h.store);
    await processor.storedRunsRead();
    await processor.process([h.event(user, "off", "run_start", {})]);
    await processor.process([h.event(user, "off", "step", { node_name: "a", phase: "end" })]);
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

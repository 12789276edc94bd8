/**
 * Run versions through the part processor on a real chDB: each part writes a version of every run it touched, so
 * nothing is left to write when the log commits a batch, and a part that failed after storing its events leaves
 * the run's counters exact once the retry has gone through.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventStore } from "../core/ports/event-store.js";
import type { LoggedEvent } from "../core/events/schema.js";
import { encodeEvents } from "../core/events/wire.js";
import { createRecordHandler } from "./record-handler.js";
import { processorHarness, quiet as quietLogger, type ProcessorHarness } from "./testing/processor-harness.js";

describe("run versions written by the part processor (chDB)", () => {
  let h: ProcessorHarness;
  beforeAll(async () => {
    h = await processorHarness("run-versions");
  });
  afterAll(async () => {
    await h?.close();
  });

  /** Every stored version of the run (not folded): what the parts wrote. */
  const versions = async (user: number, run: string) =>
    h.ports.clickhouse.query<{ status: string; event_count: number }>(
      "SELECT status, event_count FROM agent_runs WHERE user_id = {u:UInt64} AND external_id = {r:String} ORDER BY version",
      { u: user, r: run },
    );

  it("through the record handler: a log batch of several parts writes each run once per part that touched it, exact", async () => {
    const user = await h.createUser();
    // Three runs interleaved as exports spread traces: their events alternate, so parts of 4 touch each run often.
    const runs = ["ta", "tb", "tc"];
    const events: LoggedEvent[] = runs.map((r) => h.event(user, r, "run_start", { framework: "test" }));
    for (let n = 0; n < 4; n++) for (const r of runs) events.push(h.event(user, r, "tool_call", { tool_name: `t${n}`, phase: "end" }));
    for (const r of runs) events.push(h.event(user, r, "run_end", {}));
    const processor = await h.processorWith(h.ports.clickhouse, h.store);
    await processor.storedRunsRead();
    // One log batch of 18 events (as an OTLP export record expands to hundreds), stored in parts of 4.
    const handle = createRecordHandler(processor, h.ports, quietLogger, { maxEvents: 4 });
    await handle(encodeEvents(events));
    const counts = async (r: string) => (await versions(user, r)).map((v) => v.event_count);
    // Parts: [ta tb tc ta] [tb tc ta tb] [tc ta tb tc] [ta tb tc ta·end] [tb·end tc·end]
    expect(await counts("ta")).toEqual([2, 3, 4, 6]);
    expect(await counts("tb")).toEqual([1, 3, 4, 5, 6]);
    expect(await counts("tc")).toEqual([1, 2, 4, 5, 6]);
    for (const r of runs) expect((await versions(user, r)).at(-1)!.status).toBe("success");
  });

  it("recounts a run whose part failed after its events were stored, when the retry loads it again", async () => {
    const user = await h.createUser();
    let down = false;
    const store = {
      ...h.store,
      upsertRuns: async (runs, costs) => {
        if (down) throw new Error("ClickHouse went away (test)");
        await h.store.upsertRuns(runs, costs);
      },
    } as EventStore;
    const processor = await h.processorWith(h.ports.clickhouse, store);
    await processor.storedRunsRead();
    const step = (n: number) => h.event(user, "again", "step", { node_name: `s${n}`, phase: "end", kind: "tool" });
    await processor.processPart([h.event(user, "again", "run_start", {}), step(1)]);
    // The part's events are stored, then the runs' write fails: the stored row still says 2 events.
    const failed = [step(2), h.event(user, "again", "error", { error_message: "boom" })];
    down = true;
    await expect(processor.processPart(failed)).rejects.toThrow(/went away/);
    down = false;
    expect((await versions(user, "again")).at(-1)).toEqual({ status: "running", event_count: 2 });
    // The retry, with one more event: the run is loaded from storage, its stored events found again and recounted.
    await processor.processPart([...failed, step(3)]);
    const [run] = await h.store.loadRuns([{ project_id: user, external_id: "again" }]);
    expect(run).toMatchObject({ event_count: 5, error_count: 1 });
  });
});

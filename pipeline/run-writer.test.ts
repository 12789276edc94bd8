/**
 * The RunWriter (run-writer.ts) without the part processor: versions above the stored one, cost rows only when the
 * cost facts change, versions held within a log batch and written by flush, and what a failed write leaves.
 */
import { describe, expect, it } from "vitest";
import type { EventStore } from "../core/clickhouse/types.js";
import { newRunRecord, type RunRecord } from "../core/events/run.js";
import { runKey, type RunKey } from "../core/events/run-key.js";
import { runIdFor } from "../core/ids.js";
import { createLogger } from "../core/logger.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import { PipelineCounters } from "./counters.js";
import { RunState, type RunEntry } from "./run-state.js";
import { costRowsDue, runShape, RunWriter, versionClock } from "./run-writer.js";

/** An event store that keeps the rows it is given, in order; `failing` makes the next write throw. */
function recordingStore() {
  const writes: { runs: RunRecord[]; costs: RunRecord[] }[] = [];
  const store = {
    failing: false,
    writes,
    upsertRuns: async (runs: readonly RunRecord[], costs: readonly RunRecord[] = runs) => {
      if (store.failing) throw new Error("ClickHouse went away (test)");
      writes.push({ runs: runs.map((r) => ({ ...r })), costs: costs.map((r) => ({ ...r })) });
    },
    loadRuns: async () => [],
  } satisfies Pick<EventStore, "upsertRuns" | "loadRuns"> & Record<string, unknown>;
  return store;
}

const noClickHouse = {} as ClickHouse; // the tests below recount nothing: no query is made
const setup = () => {
  const state = new RunState(100);
  const store = recordingStore();
  const counters = new PipelineCounters();
  const writer = new RunWriter(store, noClickHouse, state, counters, createLogger("error"));
  const admit = (id: string): [RunKey, RunEntry] => [runKey(1, id), state.admit(runKey(1, id), newRunRecord(1, id, runIdFor(1, id), "2026-11-26T10:00:00.000Z"), true)];
  return { state, store, counters, writer, admit };
};

describe("RunWriter", () => {
  it("writes each run with a version above the one before and above the stored one", async () => {
    const { store, writer, admit } = setup();
    const [k, a] = admit("a");
    a.run.version = Date.now() * 1000 + 10_000_000; // stored by a clock ahead of this one
    await writer.write(new Map([[k, a]]), new Set(), false, () => {});
    await writer.write(new Map([[k, a]]), new Set(), false, () => {});
    const [first, second] = store.writes.map((w) => w.runs[0]!.version);
    expect(first).toBeGreaterThan(Date.now() * 1000 + 9_000_000);
    expect(second).toBeGreaterThan(first!);
    const next = versionClock(() => 5);
    expect([next(0), next(0), next(9_000)]).toEqual([5000, 5001, 9001]);
  });

  it("holds a run whose only change is its counters, writes a change a reader must see at once, and flushes the held", async () => {
    const { store, writer, admit, counters, state } = setup();
    const [k, a] = admit("a");
    const drafts = new Map([[k, a]]);
    let taken = 0;
    await writer.write(drafts, new Set(), true, () => taken++); // first version from this process: written
    a.run.event_count = 5;
    expect(await writer.write(drafts, new Set(), true, () => taken++)).toBe(1); // counters only: held
    const rowsWritten = () => store.writes.filter((w) => w.runs.length > 0).length;
    expect(rowsWritten()).toBe(1);
    a.run.status = "waiting_for_input";
    await writer.write(drafts, new Set(), true, () => taken++); // shape changed: written, the holding ends
    expect(store.writes.at(-1)!.runs[0]).toMatchObject({ status: "waiting_for_input", event_count: 5 });
    expect(state.nothingHeld).toBe(true);
    a.run.event_count = 6;
    await writer.write(drafts, new Set(), true, () => {});
    expect(rowsWritten()).toBe(2);
    await writer.flush();
    expect(rowsWritten()).toBe(3);
    expect(store.writes.at(-1)!.runs[0]).toMatchObject({ event_count: 6 });
    expect(state.nothingHeld).toBe(true);
    expect(taken).toBe(3);
    expect(counters.snapshot().counters).toMatchObject({ run_versions_held: 2 });
  });

  it("writes a run's cost row only when its cost facts changed (or the row is an hour old)", () => {
    const entry: Pick<RunEntry, "run" | "costRow"> = { run: newRunRecord(1, "c", runIdFor(1, "c"), "2026-11-26T10:00:00.000Z") };
    const now = Date.parse("2026-11-26T12:00:00.000Z");
    const first = costRowsDue([entry], now);
    expect(first.runs).toHaveLength(1);
    first.written();
    expect(costRowsDue([entry], now + 1000).runs).toHaveLength(0);
    entry.run.cost_usd = 0.5;
    expect(costRowsDue([entry], now + 1000).runs).toHaveLength(1);
    entry.run.cost_usd = 0;
    expect(costRowsDue([entry], now + 3_600_000).runs).toHaveLength(1);
  });

  it("keeps a run held when its write fails, so a failure of the part finds it to reconcile", async () => {
    const { store, writer, admit, state } = setup();
    const [k, a] = admit("a");
    const drafts = new Map([[k, a]]);
    await writer.write(drafts, new Set(), true, () => {});
    a.run.event_count = 2;
    await writer.write(drafts, new Set(), true, () => {}); // held
    a.run.status = "success"; // an ending run is written with its part…
    store.failing = true;
    await expect(writer.write(drafts, new Set(), true, () => {})).rejects.toThrow(/went away/);
    expect(a.held).toBeDefined(); // …and its holding survives the failed write
    state.forget(k);
    expect(state.takeHeld().reconcile.map((r) => r.external_id)).toEqual(["a"]);
  });

  it("tells a change of counters from a change a reader must see at once", () => {
    const run = newRunRecord(1, "s", runIdFor(1, "s"), "2026-11-26T10:00:00.000Z");
    const shape = runShape(run);
    Object.assign(run, { event_count: 9, error_count: 1, llm_calls: 2, total_tokens: 50, cost_usd: 0.1, last_event_at: "2026-11-26T11:00:00.000Z" });
    expect(runShape(run)).toBe(shape);
    for (const change of [{ status: "waiting_for_input" }, { model: "gpt-4o" }, { agent_name: "x" }, { last_error: "boom" }, { session_id: "s" }, { started_at: "2026-11-26T09:00:00.000Z" }] as const) {
      expect(runShape({ ...run, ...change })).not.toBe(shape);
    }
  });
});

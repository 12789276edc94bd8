/**
 * The RunWriter (run-writer.ts) without the part processor: versions above the stored one, cost rows only when the
 * cost facts change, the rows made before the write is awaited.
 */
import { describe, expect, it } from "vitest";
import type { EventStore } from "../core/ports/event-store.js";
import { newRunRecord, type RunRecord } from "../core/events/run.js";
import { runKey, type RunKey } from "../core/events/run-key.js";
import { runIdFor } from "../core/ids.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import { PipelineCounters } from "./counters.js";
import { RunState, type RunEntry } from "./run-state.js";
import { costRowsDue, RunWriter, versionClock } from "./run-writer.js";

/** An event store that keeps the rows it is given, in order, a turn later; `failing` makes the next write throw. */
function recordingStore() {
  const writes: { runs: RunRecord[]; costs: RunRecord[] }[] = [];
  const store = {
    failing: false,
    writes,
    upsertRuns: async (runs: readonly RunRecord[], costs: readonly RunRecord[] = runs) => {
      if (store.failing) throw new Error("ClickHouse went away (test)");
      const rows = { runs: runs.map((r) => ({ ...r })), costs: costs.map((r) => ({ ...r })) };
      await new Promise((resolve) => setImmediate(resolve)); // lands later, as a database's answer does
      writes.push(rows);
    },
  } satisfies Pick<EventStore, "upsertRuns"> & Record<string, unknown>;
  return store;
}

const noClickHouse = {} as ClickHouse; // the tests below recount nothing: no query is made
const setup = () => {
  const state = new RunState(100);
  const store = recordingStore();
  const counters = new PipelineCounters();
  const writer = new RunWriter(store, noClickHouse, counters);
  const admit = (id: string): [RunKey, RunEntry] => [runKey(1, id), state.admit(runKey(1, id), newRunRecord({ project_id: 1, user_id: 1 }, id, runIdFor(1, id), "2026-11-26T10:00:00.000Z"), true)];
  return { state, store, counters, writer, admit };
};

describe("RunWriter", () => {
  it("writes each run with a version above the one before and above the stored one", async () => {
    const { store, writer, admit } = setup();
    const [k, a] = admit("a");
    a.run.version = Date.now() * 1000 + 10_000_000; // stored by a clock ahead of this one
    await writer.write(new Map([[k, a]]), new Set(), () => {});
    await writer.write(new Map([[k, a]]), new Set(), () => {});
    const [first, second] = store.writes.map((w) => w.runs[0]!.version);
    expect(first).toBeGreaterThan(Date.now() * 1000 + 9_000_000);
    expect(second).toBeGreaterThan(first!);
    const next = versionClock(() => 5);
    expect([next(0), next(0), next(9_000)]).toEqual([5000, 5001, 9001]);
  });

  it("writes every run of the part, its rows made before the write is awaited, and counts what it wrote", async () => {
    const { store, writer, admit, counters } = setup();
    const [ka, a] = admit("a");
    const [kb, b] = admit("b");
    let seenAtTaken = -1;
    await writer.write(new Map([[ka, a], [kb, b]]), new Set(), () => (seenAtTaken = store.writes.length));
    expect(seenAtTaken).toBe(0); // taken before the write landed: the next part may change the drafts from then on
    a.run.event_count = 5;
    await writer.write(new Map([[ka, a]]), new Set(), () => {});
    expect(store.writes.map((w) => w.runs.map((r) => [r.external_id, r.event_count]))).toEqual([[["a", 0], ["b", 0]], [["a", 5]]]);
    expect(store.writes[1]!.costs).toEqual([]); // a's cost facts did not change
    expect(counters.snapshot().counters).toMatchObject({ run_versions_written: 3, cost_rows_written: 2 });
  });

  it("writes a run's cost row only when its cost facts changed (or the row is an hour old)", () => {
    const entry: Pick<RunEntry, "run" | "costRow"> = { run: newRunRecord({ project_id: 1, user_id: 1 }, "c", runIdFor(1, "c"), "2026-11-26T10:00:00.000Z") };
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

  it("rejects when the write fails, and records no cost row as written", async () => {
    const { store, writer, admit } = setup();
    const [k, a] = admit("a");
    store.failing = true;
    await expect(writer.write(new Map([[k, a]]), new Set(), () => {})).rejects.toThrow(/went away/);
    expect(a.costRow).toBeUndefined();
    store.failing = false;
    await writer.write(new Map([[k, a]]), new Set(), () => {});
    expect(store.writes[0]!.costs).toHaveLength(1);
  });
});

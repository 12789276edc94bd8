/**
 * Which runs may be stored (stored-runs.ts), on a real chDB: read from both tables, in slices, again after a
 * failure; and the batch processor asking storage only about runs that may be stored, exactly once across a crash.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createEventStore } from "../stores/runs/event-store.js";
import type { EventStore } from "../core/ports/event-store.js";
import { runIdFor } from "../core/ids.js";
import type { Logger } from "../core/logger.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import { StoredRuns } from "./stored-runs.js";
import { countingLookUps, processorHarness, quiet, type ProcessorHarness } from "./testing/processor-harness.js";

let h: ProcessorHarness;
beforeAll(async () => {
  h = await processorHarness("stored-runs");
});
afterAll(async () => {
  await h?.close();
});

it("reads the run ids of agent_runs and of agent_events, in slices, and again without forgetting any or holding one twice; until read, and after close, every run may be stored", async () => {
  const user = await h.createUser();
  const processor = await h.processorWith(h.ports.clickhouse, h.store);
  for (const run of ["kept-1", "kept-2", "kept-3", "kept-4", "kept-5"]) await processor.processPart(h.lifecycle(user, run));
  processor.close();
  // Events stored without their run's row: the crash window between the two writes.
  await h.store.insertEvents([h.event(user, "events-only", "run_start", { framework: "test" })]);

  const runs = new StoredRuns(h.ports.clickhouse, quiet, 2); // 2 runs per slice: three or more slices
  expect(runs.mayBeStored(runIdFor(user, "never-sent"))).toBe(true);
  const read = runs.reload();
  expect(runs.loaded).toBe(false);
  await read;
  expect(runs.loaded).toBe(true);
  for (const run of ["kept-1", "kept-2", "kept-3", "kept-4", "kept-5", "events-only"]) expect(runs.mayBeStored(runIdFor(user, run))).toBe(true);
  expect(runs.mayBeStored(runIdFor(user, "never-sent"))).toBe(false);
  expect(runs.mayBeStored(runIdFor(user + 1, "kept-1"))).toBe(false); // another tenant's run of the same name
  expect(runs.takeOn(runIdFor(user, "never-sent"))).toBe(false); // new until now; held from here on
  expect(runs.mayBeStored(runIdFor(user, "never-sent"))).toBe(true);
  // A re-read (a rebalance) keeps what it holds, a run being written included, and adds no id twice.
  const held = runs.size;
  expect(held).toBeGreaterThanOrEqual(7);
  await runs.reload();
  expect(runs.size).toBe(held);
  expect(runs.mayBeStored(runIdFor(user, "never-sent"))).toBe(true);
  // Taking on a run it holds (one reloaded into the run cache) answers "maybe stored" and adds nothing either.
  expect(runs.takeOn(runIdFor(user, "kept-1"))).toBe(true);
  expect(runs.size).toBe(held);
  runs.close();
  expect(runs.mayBeStored(runIdFor(user, "other"))).toBe(true);
});

it("reads again after storage fails, looking every run up meanwhile", async () => {
  let failures = 1;
  const warnings: string[] = [];
  const logger: Logger = { ...quiet, warn: (msg) => void warnings.push(msg), child: () => logger };
  const flaky: ClickHouse = {
    ...h.ports.clickhouse,
    query: (sql, params) => (failures-- > 0 ? Promise.reject(new Error("ClickHouse went away (test)")) : h.ports.clickhouse.query(sql, params)),
  };
  const runs = new StoredRuns(flaky, logger);
  const read = runs.reload();
  await new Promise((r) => setTimeout(r, 50));
  expect(runs.loaded).toBe(false);
  expect(runs.mayBeStored(runIdFor(1, "anything"))).toBe(true);
  expect(warnings).toEqual(["could not read the stored runs; every run is looked up until they are read"]);
  await read; // after the first retry (1 s)
  expect(runs.loaded).toBe(true);
  expect(runs.mayBeStored(runIdFor(1, "anything"))).toBe(false);
});

it("does not ask storage about runs it has never seen, and still counts a run once across a crash and a restart", async () => {
  const user = await h.createUser();
  const { ch, counts } = countingLookUps(h.ports.clickhouse);
  let loads = 0;
  const countingStore: EventStore = { ...createEventStore(ch), loadRuns: (keys) => (loads++, h.store.loadRuns(keys)) };

  const first = await h.processorWith(ch, countingStore);
  await first.storedRunsRead();
  await first.processPart(h.lifecycle(user, "new-a").slice(0, 2));
  expect({ loads, eventLookUps: counts.eventLookUps }).toEqual({ loads: 0, eventLookUps: 0 });
  await first.processPart(h.lifecycle(user, "new-a").slice(2)); // every stored event of it went through `first`: no look-up either
  expect(counts.eventLookUps).toBe(0);
  expect(await h.store.getRun(user, "new-a")).toMatchObject({ status: "success", event_count: 4 });

  // The crash window: a new run's events stored, its row not (the process dies between the two writes).
  const window = h.lifecycle(user, "new-w");
  const failing: EventStore = { ...countingStore, upsertRuns: async () => { throw new Error("ClickHouse went away (test)"); } };
  const crashing = await h.processorWith(ch, failing);
  await crashing.storedRunsRead();
  await expect(crashing.processPart(window.slice(0, 2))).rejects.toThrow(/went away/);
  crashing.close();
  expect(loads).toBe(0); // new-w was new to it too

  // A restart reads the stored runs (new-w among them, from its events) and replays the batch: counted once.
  const restarted = await h.processorWith(ch, countingStore);
  await restarted.storedRunsRead();
  await restarted.processPart(window.slice(0, 2));
  expect(loads).toBe(1);
  await restarted.processPart(window.slice(2));
  expect(await h.store.getRun(user, "new-w")).toMatchObject({ status: "success", event_count: 4 });
  expect(await h.store.listEvents(user, runIdFor(user, "new-w"))).toHaveLength(4);
  restarted.close();
  first.close();
});

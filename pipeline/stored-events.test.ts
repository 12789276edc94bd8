/**
 * The duplicate look-up on a real chDB: which of a part's events are stored, asked per run first for runs not in
 * memory, and per event only where a run has stored events; and the DuplicateIndex that decides what to ask.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openChdb } from "../core/clickhouse/chdb.js";
import { createEventStore } from "../stores/runs/event-store.js";
import { migrateClickHouse } from "../core/clickhouse/migrate.js";
import { newRunRecord } from "../core/events/run.js";
import { eventKey, runKey, runKeyOfEvent } from "../core/events/run-key.js";
import type { LoggedEvent } from "../core/events/schema.js";
import { createLogger } from "../core/logger.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import { runIdFor, uuidv7 } from "../core/ids.js";
import { PipelineCounters } from "./counters.js";
import { DuplicateIndex } from "./duplicate-index.js";
import { RunState } from "./run-state.js";
import { findRunsWithEvents, senderRun } from "../stores/runs/stored-events.js";
import { findStoredEvents } from "./stored-events.js";

let dir = "";
let ch: ClickHouse;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "runwatch-stored-events-"));
  ch = await openChdb(dir, "runwatch");
  await migrateClickHouse(ch);
});
afterAll(async () => {
  await ch?.close();
  await rm(dir, { recursive: true, force: true });
});

const at = new Date().toISOString();
const event = (user: number, sdk: string, n: number): LoggedEvent => ({
  event_id: uuidv7(), project_id: user, user_id: user, run_id: runIdFor(user, sdk), sdk_run_id: sdk, event_type: "step", agent_name: "a",
  payload: { node_name: `n${n}`, phase: "end" }, occurred_at: at, received_at: at, config_version: null,
});

/** The ClickHouse port, counting the event ids each query is asked about. */
function counting(inner: ClickHouse): ClickHouse & { idsAsked: number } {
  const spy = Object.create(inner) as ClickHouse & { idsAsked: number };
  spy.idsAsked = 0;
  spy.query = async (sql, params) => {
    if (Array.isArray(params?.ids)) spy.idsAsked += params.ids.length;
    return inner.query(sql, params);
  };
  return spy;
}

const keysOf = (events: readonly LoggedEvent[]) => events.map((e) => eventKey(runKeyOfEvent(e), e.event_id));

it("finds stored events of cached and uncached runs alike, asking per id only for runs with stored events", async () => {
  const store = createEventStore(ch);
  const old = Array.from({ length: 4 }, (_, n) => event(7, "old-run", n)); // stored, run not in this cache
  const cached = Array.from({ length: 3 }, (_, n) => event(7, "cached-run", n)); // stored, run in the cache
  await store.insertEvents([...old, ...cached]);
  // Another tenant's run with the same sdk_run_id is a different run: its events are not this tenant's copies.
  const otherTenant = { ...event(8, "old-run", 0), event_id: old[0]!.event_id };
  const fresh = Array.from({ length: 50 }, (_, n) => event(7, `new-${n % 10}`, n)); // ten runs never stored

  const part = [old[1]!, event(7, "old-run", 9), cached[0]!, event(7, "cached-run", 9), otherTenant, ...fresh];
  const keys = keysOf(part);
  const spy = counting(ch);
  const stored = await findStoredEvents(spy, part, keys, (i) => (part[i]!.sdk_run_id === "cached-run" ? "by-id" : "by-run"));
  expect([...stored].sort()).toEqual([keys[0]!, keys[2]!].sort());
  // Per id: the cached run's two events and the stored run's two; the new runs' fifty and the other tenant's none.
  expect(spy.idsAsked).toBe(4);

  expect(await findRunsWithEvents(ch, [old[0]!, otherTenant, fresh[0]!])).toEqual(new Set([senderRun(old[0]!)]));
  // Every run asked about first: the answer is the same. Skipped ones are not asked about at all.
  expect(await findStoredEvents(ch, part, keys, () => "by-run")).toEqual(stored);
  expect(await findStoredEvents(ch, part, keys, () => "skip")).toEqual(new Set());
});

describe("DuplicateIndex", () => {
  it("flags stored events and repeats, asks nothing about new runs or runs whose stored events it knows", async () => {
    const stored = event(9, "stored-run", 0);
    await createEventStore(ch).insertEvents([stored]);
    const state = new RunState(100);
    const spy = counting(ch);
    const again = new DuplicateIndex(spy, createLogger("error"), state, new PipelineCounters());
    await again.storedRunsRead;

    const brandNew = [event(9, "brand-new", 0), event(9, "brand-new", 1)];
    const part = [stored, { ...stored }, ...brandNew, { ...brandNew[0]! }];
    const runKeys = part.map(runKeyOfEvent);
    const missing = [...new Map(part.map((e, i) => [runKeys[i]!, e] as const))];
    const fresh = again.newRuns(missing);
    expect([...fresh]).toEqual([runKey(9, "brand-new")]);
    spy.idsAsked = 0;
    const found = await again.find(part, runKeys, [], fresh);
    // The stored event and its repeat; the new run's repeat within the part. Only the stored run was asked about.
    expect(found.flags).toEqual([true, true, false, false, true]);
    expect(spy.idsAsked).toBe(2);

    // The new run is admitted and known: its stored events are recorded, and found again without asking.
    state.admit(runKey(9, "brand-new"), newRunRecord({ project_id: 9, user_id: 9 }, "brand-new", brandNew[0]!.run_id, brandNew[0]!.occurred_at), true);
    again.startKnowing(runKey(9, "brand-new"));
    again.recordStored(runKeys, found, []);
    spy.idsAsked = 0;
    const resent = await again.find(brandNew, brandNew.map(runKeyOfEvent), [runKey(9, "brand-new")], new Set());
    expect(resent.flags).toEqual([true, true]);
    expect(spy.idsAsked).toBe(0);
    // Once the run has ended its stored events are let go: the next resend asks storage.
    again.recordStored([], { flags: [], keys: [] }, [runKey(9, "brand-new")]);
    expect(state.knowsAllStored(runKey(9, "brand-new"))).toBe(false);
    again.close();
  });
});

/**
 * The duplicate look-up on a real chDB: which of a batch's events are stored, asked per run first for runs the
 * cache does not hold, and per event only where a run has stored events.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openChdb } from "../core/clickhouse/chdb.js";
import { createEventStore } from "../core/clickhouse/event-store.js";
import { migrateClickHouse } from "../core/clickhouse/migrate.js";
import { logKey, type LoggedEvent } from "../core/events/schema.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import { runIdFor, uuidv7 } from "../core/ids.js";
import { findRunsWithEvents, findStoredEventIds, storedEventKey } from "./stored-events.js";

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
  event_id: uuidv7(), user_id: user, run_id: runIdFor(user, sdk), sdk_run_id: sdk, event_type: "step", agent_name: "a",
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

it("finds stored events of cached and uncached runs alike, asking per id only for runs with stored events", async () => {
  const store = createEventStore(ch);
  const old = Array.from({ length: 4 }, (_, n) => event(7, "old-run", n)); // stored, run not in this cache
  const cached = Array.from({ length: 3 }, (_, n) => event(7, "cached-run", n)); // stored, run in the cache
  await store.insertEvents([...old, ...cached]);
  // Another tenant's run with the same sdk_run_id is a different run: its events are not this tenant's copies.
  const otherTenant = { ...event(8, "old-run", 0), event_id: old[0]!.event_id };
  const fresh = Array.from({ length: 50 }, (_, n) => event(7, `new-${n % 10}`, n)); // ten runs never stored

  const batch = [old[1]!, event(7, "old-run", 9), cached[0]!, event(7, "cached-run", 9), otherTenant, ...fresh];
  const spy = counting(ch);
  const stored = await findStoredEventIds(spy, batch, new Set([logKey(cached[0]!)]));
  expect([...stored].sort()).toEqual([storedEventKey(old[1]!), storedEventKey(cached[0]!)].sort());
  // Per id: the cached run's two events and the stored run's two; the new runs' fifty and the other tenant's none.
  expect(spy.idsAsked).toBe(4);

  expect(await findRunsWithEvents(ch, [old[0]!, otherTenant, fresh[0]!])).toEqual(new Set([`7:${old[0]!.run_id}`]));
  // Without a cache every run is asked about first; the answer is the same.
  expect(await findStoredEventIds(ch, batch)).toEqual(stored);
});

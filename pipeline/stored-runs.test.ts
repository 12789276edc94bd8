/**
 * Which runs may be stored (stored-runs.ts), on a real chDB: read from both tables, in slices, again after a
 * failure; and the batch processor asking storage only about runs that may be stored, exactly once across a crash.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createEventStore } from "../core/clickhouse/event-store.js";
import type { EventStore } from "../core/clickhouse/types.js";
import { loadConfig } from "../core/config.js";
import type { EventType, LoggedEvent } from "../core/events/schema.js";
import { runIdFor, uuidv7 } from "../core/ids.js";
import { createLogger, type Logger } from "../core/logger.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import { openPorts, type Ports } from "../core/runtime.js";
import { buildChain } from "../plugins/index.js";
import type { PluginContext } from "../plugins/plugin.js";
import { createBatchProcessor } from "./batch-processor.js";
import { StoredRuns } from "./stored-runs.js";

let dir: string;
let ports: Ports;
let store: EventStore;
const quiet = createLogger("error");

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-stored-runs-"));
  ports = await openPorts(loadConfig({ RUNWATCH_DATA_DIR: dir, LOG_LEVEL: "error" }));
  store = createEventStore(ports.clickhouse);
});

afterAll(async () => {
  await ports?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

let nextUser = 1;
async function createUser(): Promise<number> {
  const rows = await ports.sql.query<{ id: number | string }>(
    "INSERT INTO users (name, email, password_hash) VALUES ('Test', $1, 'x') RETURNING id", [`stored-runs-${nextUser++}@example.com`]);
  return Number(rows[0]!.id);
}

let clock = Date.parse("2026-11-26T10:00:00.000Z");
function event(user: number, sdkRunId: string, type: EventType, payload: Record<string, unknown> = {}): LoggedEvent {
  const at = new Date((clock += 1000)).toISOString();
  return {
    event_id: uuidv7(), user_id: user, run_id: runIdFor(user, sdkRunId), sdk_run_id: sdkRunId, event_type: type,
    agent_name: type === "run_start" ? "filtered" : null, payload, occurred_at: at, received_at: at, config_version: null,
  };
}
const lifecycle = (user: number, run: string): LoggedEvent[] => [
  event(user, run, "run_start", { framework: "test" }),
  event(user, run, "step", { node_name: "plan", phase: "start" }),
  event(user, run, "step", { node_name: "plan", phase: "end" }),
  event(user, run, "run_end", {}),
];

/** ClickHouse that counts the pipeline's look-ups of runs and events. */
function counting(ch: ClickHouse) {
  const counts = { eventLookUps: 0 };
  const wrapped: ClickHouse = {
    ...ch,
    query: (sql, params) => {
      if (/FROM agent_events\s+WHERE user_id IN/.test(sql)) counts.eventLookUps++;
      return ch.query(sql, params);
    },
  };
  return { ch: wrapped, counts };
}

async function processorWith(ch: ClickHouse, eventStore: EventStore) {
  const ctx: PluginContext = { config: ports.config, logger: quiet, sql: ports.sql, clickhouse: ch, pubsub: ports.pubsub, store: eventStore };
  const chain = await buildChain(ctx);
  for (const p of chain) await p.init?.(ctx);
  return createBatchProcessor(ctx, eventStore, chain, 100);
}

it("reads the run ids of agent_runs and of agent_events, in slices, and again without forgetting any or holding one twice; until read, and after close, every run may be stored", async () => {
  const user = await createUser();
  const processor = await processorWith(ports.clickhouse, store);
  for (const run of ["kept-1", "kept-2", "kept-3", "kept-4", "kept-5"]) await processor(lifecycle(user, run));
  processor.close();
  // Events stored without their run's row: the crash window between the two writes.
  await store.insertEvents([event(user, "events-only", "run_start", { framework: "test" })]);

  const runs = new StoredRuns(ports.clickhouse, quiet, 2); // 2 runs per slice: three or more slices
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
    ...ports.clickhouse,
    query: (sql, params) => (failures-- > 0 ? Promise.reject(new Error("ClickHouse went away (test)")) : ports.clickhouse.query(sql, params)),
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
  const user = await createUser();
  const { ch, counts } = counting(ports.clickhouse);
  let loads = 0;
  const countingStore: EventStore = { ...createEventStore(ch), loadRuns: (keys) => (loads++, store.loadRuns(keys)) };

  const first = await processorWith(ch, countingStore);
  await first.storedRunsRead();
  await first(lifecycle(user, "new-a").slice(0, 2));
  expect({ loads, eventLookUps: counts.eventLookUps }).toEqual({ loads: 0, eventLookUps: 0 });
  await first(lifecycle(user, "new-a").slice(2)); // cached now: its events are looked up by id, as before
  expect(await store.getRun(user, "new-a")).toMatchObject({ status: "success", event_count: 4 });

  // The crash window: a new run's events stored, its row not (the process dies between the two writes).
  const window = lifecycle(user, "new-w");
  const failing: EventStore = { ...countingStore, upsertRuns: async () => { throw new Error("ClickHouse went away (test)"); } };
  const crashing = await processorWith(ch, failing);
  await crashing.storedRunsRead();
  await expect(crashing(window.slice(0, 2))).rejects.toThrow(/went away/);
  crashing.close();
  expect(loads).toBe(0); // new-w was new to it too

  // A restart reads the stored runs (new-w among them, from its events) and replays the batch: counted once.
  const restarted = await processorWith(ch, countingStore);
  await restarted.storedRunsRead();
  await restarted(window.slice(0, 2));
  expect(loads).toBe(1);
  await restarted(window.slice(2));
  expect(await store.getRun(user, "new-w")).toMatchObject({ status: "success", event_count: 4 });
  expect(await store.listEvents(user, runIdFor(user, "new-w"))).toHaveLength(4);
  restarted.close();
  first.close();
});

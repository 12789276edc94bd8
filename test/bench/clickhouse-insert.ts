/**
 * The storage ceiling of the pipeline: EventStore.insertEvents on chDB (or CLICKHOUSE_URL) at batch sizes
 * 100 / 1,000 / 10,000, printing rows/s. Events are realistic (~300-byte payloads, a handful of runs).
 *
 *   node --import tsx test/bench/clickhouse-insert.ts [--events=200000] [--list-runs=1000000]
 *
 * --list-runs=N also writes N runs for one user (two versions each for 10%) and times the run reads:
 * listRuns first page, a deep page, a status filter, getRun.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { LoggedEvent } from "../../core/events/schema.js";
import { newRunRecord, type RunRecord } from "../../core/events/run.js";
import { runIdFor, uuidv7 } from "../../core/ids.js";
import { openChdb } from "../../core/clickhouse/chdb.js";
import { openClickHouseServer } from "../../core/clickhouse/server.js";
import { migrateClickHouse } from "../../core/clickhouse/migrate.js";
import { createEventStore } from "../../stores/runs/event-store.js";

const arg = (name: string, dflt: number) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.split("=")[1]) : dflt;
};
const totalEvents = arg("events", 200_000);
const listRuns = arg("list-runs", 0);

function makeEvent(userId: number, run: number): LoggedEvent {
  const now = new Date().toISOString();
  const sdk = `run-${run}`;
  return {
    event_id: uuidv7(),
    project_id: userId, user_id: userId,
    run_id: runIdFor(userId, sdk),
    sdk_run_id: sdk,
    event_type: "tool_call",
    agent_name: null,
    payload: {
      tool_name: "web_search",
      phase: "end",
      input_preview: "query: latest ClickHouse release notes and ReplacingMergeTree behaviour",
      output_preview: "Found 10 results: 1. ClickHouse 26.7 release ... 2. ReplacingMergeTree docs ... 3. Blog post on FINAL ...",
      duration_ms: 412,
    },
    occurred_at: now,
    received_at: now,
    config_version: null,
  };
}

const dir = process.env.CLICKHOUSE_URL ? "" : await mkdtemp(path.join(os.tmpdir(), "runwatch-bench-ch-"));
const ch: ClickHouse = process.env.CLICKHOUSE_URL
  ? await openClickHouseServer(process.env.CLICKHOUSE_URL, `runwatch_bench_${process.pid}`)
  : await openChdb(dir, "runwatch");
await migrateClickHouse(ch);
const store = createEventStore(ch);
console.log(`transport: ${process.env.CLICKHOUSE_URL ? "ClickHouse server" : "chDB"}, ${totalEvents} events per batch size`);

for (const batch of [100, 1_000, 10_000]) {
  const batches = Math.max(1, Math.floor(totalEvents / batch));
  const pre = Array.from({ length: batches }, (_, b) => Array.from({ length: batch }, (_, i) => makeEvent(1, (b * batch + i) % 50)));
  const t0 = performance.now();
  for (const events of pre) await store.insertEvents(events);
  const s = (performance.now() - t0) / 1000;
  const n = batches * batch;
  console.log(`batch ${String(batch).padStart(6)}: ${Math.round(n / s).toLocaleString("en-US").padStart(9)} rows/s  (${n} rows, ${((s * 1000) / batches).toFixed(1)} ms per insert)`);
}

if (listRuns > 0) {
  const user = 2;
  const chunk = 50_000;
  const base = Date.UTC(2026, 0, 1);
  const t0 = performance.now();
  for (let off = 0; off < listRuns; off += chunk) {
    const rows: RunRecord[] = [];
    for (let i = off; i < Math.min(listRuns, off + chunk); i++) {
      const at = new Date(base + i * 1000).toISOString();
      const r = { ...newRunRecord({ project_id: user, user_id: user }, `sdk-${i.toString(36)}-${(i * 2654435761) % 1e9}`, runIdFor(user, `r${i}`), at), started_at: at, agent_name: `agent-${i % 20}`, status: "success" as const, version: 1 };
      rows.push(r);
      if (i % 10 === 0) rows.push({ ...r, status: "error", version: 2 });
    }
    await store.upsertRuns(rows);
  }
  console.log(`wrote ${listRuns.toLocaleString("en-US")} runs in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const time = async (label: string, f: () => Promise<unknown>) => {
    await f();
    const runs = 5;
    const t = performance.now();
    for (let i = 0; i < runs; i++) await f();
    console.log(`${label.padEnd(34)} ${((performance.now() - t) / runs).toFixed(1)} ms`);
  };
  let cursor: string | undefined;
  for (let p = 0; p < 20; p++) cursor = (await store.listRuns(user, { limit: 50, cursor })).next_cursor ?? undefined;
  await time("listRuns first page (50)", () => store.listRuns(user, { limit: 50 }));
  await time("listRuns page 21 (cursor)", () => store.listRuns(user, { limit: 50, cursor }));
  await time("listRuns status=error (50)", () => store.listRuns(user, { status: "error", limit: 50 }));
  await time("listRuns agent_name + since (50)", () => store.listRuns(user, { agent_name: "agent-3", since: new Date(base + listRuns * 500).toISOString(), limit: 50 }));
  await time("getRun", () => store.getRun(user, "sdk-0-0"));
}

await ch.close();
if (dir) await rm(dir, { recursive: true, force: true });

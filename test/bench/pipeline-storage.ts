/**
 * What the pipeline's storage calls cost per batch, alone: for 20 batches of 5,000 realistic events (runs of 100,
 * a third of them LLM calls), the duplicate look-up (for runs the cache holds, and for new runs), the run loads,
 * the agent_events insert, the runs' write (with their cost rows) and the llm_calls insert, on an embedded chDB —
 * CPU of the whole process (chDB's threads included) and wall time per batch, then RSS. docs/BENCHMARKS.md
 * ("Smaller benches") quotes it.
 *
 *   npm run bench:pipeline-storage
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { openChdb } from "../../core/clickhouse/chdb.js";
import { migrateClickHouse } from "../../core/clickhouse/migrate.js";
import { createEventStore, toChTime } from "../../stores/runs/event-store.js";
import { newRunRecord } from "../../core/events/run.js";
import { eventKey, runKeyOfEvent } from "../../core/events/run-key.js";
import type { LoggedEvent } from "../../core/events/schema.js";
import { runIdFor, uuidv7 } from "../../core/ids.js";
import { findStoredEvents } from "../../pipeline/stored-events.js";

const BATCHES = 20;
const dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-bench-storage-"));
const ch = await openChdb(dir, "runwatch");
await migrateClickHouse(ch);
const store = createEventStore(ch);
const OUT = "x".repeat(150);
const acc: Record<string, { cpu: number; wall: number }> = {};
/** Runs one storage call and adds its CPU (every thread of the process) and wall time to its line. */
async function op(name: string, f: () => Promise<unknown>) {
  const c0 = process.cpuUsage(); const t0 = performance.now();
  await f();
  const c = process.cpuUsage(c0);
  const a = (acc[name] ??= { cpu: 0, wall: 0 });
  a.cpu += (c.user + c.system) / 1000; a.wall += performance.now() - t0;
}
const now = new Date().toISOString();
for (let b = 0; b < BATCHES; b++) {
  const events = Array.from({ length: 5000 }, (_, n) => {
    const run = b * 50 + Math.floor(n / 100);
    const sdk = `r${run}`;
    const payload = n % 3 === 1
      ? { node_name: "call_model", kind: "llm", phase: "end", model: "gpt-4o-mini", prompt_tokens: 812, completion_tokens: 96, duration_ms: 640, output: OUT }
      : { tool_name: "web_search", phase: "end", input_preview: "query: langgraph release notes", output_preview: OUT, duration_ms: 120 };
    const event: LoggedEvent = { event_id: uuidv7(), project_id: 1, user_id: 1, run_id: runIdFor(1, sdk), sdk_run_id: sdk, event_type: n % 3 === 1 ? "step" : "tool_call", agent_name: "a", payload, occurred_at: now, received_at: now, config_version: null };
    return event;
  });
  const runs = Array.from({ length: 50 }, (_, i) => newRunRecord({ project_id: 1, user_id: 1 }, `r${b * 50 + i}`, runIdFor(1, `r${b * 50 + i}`), now));
  // The look-up for runs the pipeline's cache holds (per event id), and for runs it does not (per run first).
  const keys = events.map((e) => eventKey(runKeyOfEvent(e), e.event_id));
  await op("duplicate look-up, cached", () => findStoredEvents(ch, events, keys, () => "by-id"));
  await op("duplicate look-up, new runs", () => findStoredEvents(ch, events, keys, () => "by-run"));
  await op("run loads (50 runs)", () => store.loadRuns(runs.map((r) => ({ project_id: 1, external_id: r.external_id }))));
  await op("agent_events insert (5,000)", () => store.insertEvents(events));
  await op("runs + cost rows (50)", () => { runs.forEach((r, i) => (r.version = Date.now() * 1000 + i)); return store.upsertRuns(runs); });
  // The rows plugins/llm-calls.ts writes for the batch's LLM calls.
  const llm = events.filter((_, i) => i % 3 === 1).map((e) => ({ user_id: 1, run_id: e.run_id, sdk_run_id: e.sdk_run_id, call_id: e.event_id, span_id: "", parent_span_id: "", event_id: e.event_id, agent_name: "a", config_version: null, name: "call_model", model: "gpt-4o-mini", provider: "openai", prompt_tokens: 812, completion_tokens: 96, total_tokens: 908, cached_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0, cost_usd: 0.0001, cost_source: "computed", status: "ok", started_at: toChTime(now), ended_at: toChTime(now), duration_ms: 640, day: now.slice(0, 10) }));
  await op(`llm_calls insert (${llm.length})`, () => ch.insert("llm_calls", llm));
}
console.log(`pipeline storage calls, ${BATCHES} batches of 5,000 events (embedded chDB, node ${process.version})`);
for (const [k, v] of Object.entries(acc)) console.log(`  ${k.padEnd(30)} CPU ${(v.cpu / BATCHES).toFixed(1).padStart(6)} ms/batch   wall ${(v.wall / BATCHES).toFixed(1).padStart(6)} ms/batch`);
// A batch takes one of the two look-ups: the sum counts the dearer one.
const cpu = Object.entries(acc).reduce((n, [k, v]) => (k.endsWith("new runs") ? n : n + v.cpu), 0);
console.log(`  all of them (the cached look-up): ${(cpu / BATCHES).toFixed(0)} ms of CPU per batch = ${((cpu / (BATCHES * 5000)) * 100).toFixed(2)} s per 100,000 events`);
console.log(`  RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
await ch.close();
await fs.rm(dir, { recursive: true, force: true });

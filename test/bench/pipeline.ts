/**
 * Pipeline benchmark on the embedded adapters (file log + chDB + PGlite), in a temp data dir:
 *   1. file log appends: single events from 50 concurrent writers (like single ingest), and 1,000-event batches;
 *   2. the pipeline draining a backlog (plugin chain + ClickHouse writes), events/s;
 *   3. the pipeline keeping up with a live stream, with the end-to-end lag.
 * Run: node --import tsx test/bench/pipeline.ts [events=200000] [runs=2000]
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { loadConfig } from "../../core/config.js";
import type { EventType, LoggedEvent } from "../../core/events/schema.js";
import { runIdFor, uuidv7 } from "../../core/ids.js";
import { createLogger } from "../../core/logger.js";
import { openFileLog } from "../../core/log/file-log.js";
import { openPorts } from "../../core/runtime.js";
import { startPipeline } from "../../pipeline/runner.js";
import { appendEvents } from "../../core/log/events.js";

const TOTAL = Number(process.argv[2] ?? 200_000);
const RUNS = Number(process.argv[3] ?? 2_000);

function* runEvents(userId: number, sdk: string): Generator<[EventType, Record<string, unknown>, string | null]> {
  yield ["run_start", { framework: "langgraph", input: { question: "What is the refund policy for order 1234?" } }, "bench-agent"];
  for (let i = 0; ; i++) {
    yield ["step", { node_name: `node_${i % 7}`, phase: i % 2 ? "end" : "start", duration_ms: 12 }, null];
    yield ["tool_call", { tool_name: "search_docs", phase: "end", input_preview: "q".repeat(120), output_preview: "r".repeat(900), duration_ms: 40 }, null];
  }
}

function makeEvents(userId: number, total: number, runs: number, tag: string): LoggedEvent[] {
  const gens = Array.from({ length: runs }, (_, i) => ({ sdk: `${tag}-${i}`, gen: runEvents(userId, `${tag}-${i}`) }));
  const out: LoggedEvent[] = [];
  for (let n = 0; n < total; n++) {
    const { sdk, gen } = gens[n % runs]!;
    const [type, payload, agent] = gen.next().value!;
    const now = new Date().toISOString();
    out.push({
      event_id: uuidv7(), project_id: userId, user_id: userId, run_id: runIdFor(userId, sdk), sdk_run_id: sdk, event_type: type,
      agent_name: agent, payload, occurred_at: now, received_at: now, config_version: null,
    });
  }
  return out;
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;

async function benchLog(dir: string): Promise<void> {
  const log = await openFileLog(path.join(dir, "log-bench"), { logger: createLogger("error") });
  const events = makeEvents(1, 100_000, 500, "log");
  // Single events from 50 concurrent writers.
  const lat: number[] = [];
  let next = 0;
  const single = events.slice(0, 60_000);
  let t0 = performance.now();
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next < single.length) {
        const e = single[next++]!;
        const s = performance.now();
        await appendEvents(log, [e]);
        lat.push(performance.now() - s);
      }
    }),
  );
  let secs = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  console.log(`file log, single appends x50 concurrent: ${Math.round(single.length / secs).toLocaleString()} events/s, ack p50 ${pct(lat, 50).toFixed(2)} ms, p99 ${pct(lat, 99).toFixed(2)} ms`);
  // 1,000-event batches from 4 concurrent writers.
  const batched = events.slice(60_000);
  t0 = performance.now();
  let b = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (b < batched.length) {
        const start = b;
        b += 1000;
        await appendEvents(log, batched.slice(start, start + 1000));
      }
    }),
  );
  secs = (performance.now() - t0) / 1000;
  console.log(`file log, 1,000-event batch appends x4: ${Math.round(batched.length / secs).toLocaleString()} events/s`);
  await log.close();
}

async function waitForLag(lag: () => Promise<number>): Promise<void> {
  while ((await lag()) > 0) await new Promise((r) => setTimeout(r, 10));
}

async function main(): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-bench-pipeline-"));
  try {
    await benchLog(dir);

    const ports = await openPorts(loadConfig({ ...process.env, RUNWATCH_DATA_DIR: dir, LOG_LEVEL: "error" }));
    const [user] = await ports.sql.query<{ id: string }>("WITH u AS (INSERT INTO users (name, email, password_hash) VALUES ('Bench', 'bench@example.com', 'x') RETURNING id), p AS (INSERT INTO projects (id, slug, name, personal_of) SELECT id, 'p-' || id, 'P', id FROM u) SELECT id FROM u");
    const userId = Number(user!.id);
    let received = 0;
    await ports.pubsub.subscribePrefix("user.", () => void received++);

    // Backlog: everything in the log first, then drain.
    const backlog = makeEvents(userId, TOTAL, RUNS, "backlog");
    for (let i = 0; i < backlog.length; i += 1000) await appendEvents(ports.log, backlog.slice(i, i + 1000));
    // Ingest shares the event loop with the pipeline in embedded mode: its stalls add to ingest latency.
    const loopDelay = monitorEventLoopDelay({ resolution: 5 });
    loopDelay.enable();
    const t0 = performance.now();
    const pipeline = await startPipeline(ports, { logger: createLogger((process.env.BENCH_LOG as "debug") ?? "error") });
    await waitForLag(() => pipeline.lag());
    const secs = (performance.now() - t0) / 1000;
    loopDelay.disable();
    console.log(`event loop delay while draining: p50 ${(loopDelay.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)} ms, max ${(loopDelay.max / 1e6).toFixed(1)} ms`);
    console.log(`pipeline, backlog of ${TOTAL.toLocaleString()} events over ${RUNS.toLocaleString()} runs: ${Math.round(TOTAL / secs).toLocaleString()} events/s (${secs.toFixed(2)} s, ${received.toLocaleString()} broadcasts)`);

    // Live: a steady stream of 200-event appends while the pipeline runs.
    const live = makeEvents(userId, Math.min(TOTAL, 100_000), RUNS, "live");
    const t1 = performance.now();
    for (let i = 0; i < live.length; i += 200) await appendEvents(ports.log, live.slice(i, i + 200));
    const appended = performance.now();
    await waitForLag(() => pipeline.lag());
    const liveSecs = (performance.now() - t1) / 1000;
    console.log(`pipeline, live stream of ${live.length.toLocaleString()} events: ${Math.round(live.length / liveSecs).toLocaleString()} events/s end to end, drained ${(performance.now() - appended).toFixed(0)} ms after the last append`);

    const [stored] = await ports.clickhouse.query<{ n: string }>("SELECT uniqExact(event_id) AS n FROM agent_events");
    const [runs] = await ports.clickhouse.query<{ n: string; events: string }>("SELECT count() AS n, sum(event_count) AS events FROM agent_runs FINAL");
    console.log(`stored: ${Number(stored!.n).toLocaleString()} events, ${Number(runs!.n).toLocaleString()} runs whose event_count sums to ${Number(runs!.events).toLocaleString()}`);
    await pipeline.stop();
    await ports.close();
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

await main();

/**
 * What poison events cost the pipeline (docs/PIPELINE.md, "Failure isolation"), on the embedded adapters:
 * a backlog of events from two tenants is appended to the log, tenant A's with a share of events that a plugin
 * refuses (tests' fixtures/poison-plugin.ts), and the pipeline drains it. Printed per poison share: time until
 * every event is stored or dead-lettered, events/s, and when tenant B's last event was stored; plus RSS.
 * Run: node --import tsx test/bench/poison.ts [events=40000] [shares=0,0.001,0.01,0.05]
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../../core/config.js";
import type { LoggedEvent } from "../../core/events/schema.js";
import { runIdFor, uuidv7 } from "../../core/ids.js";
import { createLogger } from "../../core/logger.js";
import { openPorts, type Ports } from "../../core/runtime.js";
import { startPipeline } from "../../pipeline/runner.js";
import { countDeadLetters } from "../../stores/dead-letters.js";
import { appendEvents } from "../../core/log/events.js";

const TOTAL = Number(process.argv[2] ?? 40_000);
const SHARES = (process.argv[3] ?? "0,0.001,0.01,0.05").split(",").map(Number);
const FIXTURE = path.resolve(import.meta.dirname, "../e2e/fixtures/poison-plugin.ts");

function events(userId: number, n: number, poisonShare: number, tag: string): LoggedEvent[] {
  const now = new Date().toISOString();
  return Array.from({ length: n }, (_, i) => {
    const sdk = `${tag}-${i % 200}`;
    return {
      event_id: uuidv7(), project_id: userId, user_id: userId, run_id: runIdFor(userId, sdk), sdk_run_id: sdk, event_type: "tool_call", agent_name: null,
      payload: { tool_name: "search", phase: "end", output_preview: "r".repeat(300), duration_ms: 12, poison: Math.random() < poisonShare },
      occurred_at: now, received_at: now, config_version: null,
    };
  });
}

async function stored(ports: Ports, userId: number): Promise<number> {
  const [r] = await ports.clickhouse.query<{ n: string }>("SELECT uniqExact(event_id) AS n FROM agent_events WHERE user_id = {uid:UInt64}", { uid: userId });
  return Number(r?.n ?? 0);
}

async function once(share: number): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-poison-bench-"));
  delete process.env.RUNWATCH_TEST_POISON_FLAG;
  const ports = await openPorts(loadConfig({ RUNWATCH_DATA_DIR: dir, LOG_LEVEL: "error", RUNWATCH_PLUGINS: FIXTURE }));
  try {
    const [a, b] = [1001, 1002];
    const evA = events(a, TOTAL / 2, share, "a");
    const evB = events(b, TOTAL / 2, 0, "b");
    const mixed = evA.flatMap((e, i) => [e, evB[i]!]);
    for (let i = 0; i < mixed.length; i += 1000) await appendEvents(ports.log, mixed.slice(i, i + 1000));
    const poison = evA.filter((e) => e.payload.poison).length;
    const t0 = performance.now();
    const pipeline = await startPipeline(ports, { logger: createLogger("error") });
    let bDone = 0;
    for (;;) {
      const [sa, sb, dead] = await Promise.all([stored(ports, a), stored(ports, b), countDeadLetters(ports.sql)]);
      if (!bDone && sb === evB.length) bDone = performance.now() - t0;
      if (sa + dead === evA.length && sb === evB.length) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const ms = performance.now() - t0;
    await pipeline.stop();
    console.log(
      `poison ${String(share * 100).padStart(5)} % (${String(poison).padStart(4)} events)   all settled in ${(ms / 1000).toFixed(1).padStart(5)} s` +
        `   ${Math.round(TOTAL / (ms / 1000)).toString().padStart(6)} events/s   other tenant done at ${(bDone / 1000).toFixed(1)} s` +
        `   RSS ${Math.round(process.memoryUsage().rss / 2 ** 20)} MB`,
    );
  } finally {
    await ports.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

console.log(`Runwatch poison bench: ${TOTAL} events from two tenants, one sending poison, embedded, node ${process.version}`);
// chDB allows one data dir per process: run each share in a child of its own.
if (process.env.POISON_BENCH_SHARE !== undefined) {
  await once(Number(process.env.POISON_BENCH_SHARE));
} else {
  const { spawnSync } = await import("node:child_process");
  for (const share of SHARES) {
    const r = spawnSync(process.execPath, ["--import", "tsx", import.meta.filename, String(TOTAL)], { env: { ...process.env, POISON_BENCH_SHARE: String(share) }, encoding: "utf8" });
    process.stdout.write(r.stdout.split("\n").filter((l) => l.startsWith("poison")).join("\n") + "\n");
    if (r.status !== 0) process.stderr.write(r.stderr);
  }
}

/**
 * kill -9 of a process running ingest-side appends and the pipeline (embedded stack), twice, then a restart:
 * every acknowledged event is stored exactly once, and every run's counters and the agents' total_runs are
 * exact although batches were cut off at arbitrary points and replayed.
 */
import { spawn } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { createEventStore } from "../stores/runs/event-store.js";
import { loadConfig } from "../core/config.js";
import { createLogger } from "../core/logger.js";
import { openPorts, type Ports } from "../core/runtime.js";
import { startPipeline } from "./runner.js";

let dir = "";
let ports: Ports | undefined;
afterAll(async () => {
  await ports?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

async function runAndKill(round: number, acked: Map<string, Set<string>>): Promise<void> {
  const fixture = path.join(import.meta.dirname, "testing", "crash-pipeline.ts");
  const child = spawn(process.execPath, ["--import", "tsx", fixture, dir, String(round)], { stdio: ["ignore", "pipe", "inherit"] });
  let buffered = "";
  let ready!: () => void;
  const started = new Promise<void>((r) => (ready = r));
  child.stdout.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    const lines = buffered.split("\n");
    buffered = lines.pop()!;
    for (const line of lines) {
      const [a, b] = line.split(" ");
      if (a === "user") { ready(); continue; }
      if (!acked.has(a!)) acked.set(a!, new Set());
      acked.get(a!)!.add(b!);
    }
  });
  const exited = new Promise((r) => child.on("exit", r));
  await Promise.race([started, exited]);
  await new Promise((r) => setTimeout(r, 1500 + round * 700));
  child.kill("SIGKILL");
  await exited;
}

it("keeps every acknowledged event once and every counter exact across kill -9", async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-pipeline-crash-"));
  const acked = new Map<string, Set<string>>();
  await runAndKill(0, acked);
  await runAndKill(1, acked);
  const ackedEvents = [...acked.values()].reduce((n, s) => n + s.size, 0);
  expect(ackedEvents).toBeGreaterThan(100);

  ports = await openPorts(loadConfig({ RUNWATCH_DATA_DIR: dir, LOG_LEVEL: "error" }));
  const pipeline = await startPipeline(ports, { logger: createLogger("error") });
  const deadline = Date.now() + 60_000;
  while ((await pipeline.lag()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await pipeline.stop();
  const [user] = await ports.sql.query<{ id: string }>("SELECT id FROM users WHERE email = 'crash@example.com'");
  const userId = Number(user!.id);
  const store = createEventStore(ports.clickhouse);

  const runs = [];
  for (let cursor: string | undefined; ; ) {
    const page = await store.listRuns(userId, { limit: 500, cursor });
    runs.push(...page.runs);
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  const byId = new Map(runs.map((r) => [r.external_id, r]));
  for (const [sdk, ids] of acked) {
    const run = byId.get(sdk);
    expect(run, sdk).toBeDefined();
    const stored = await store.listEvents(userId, run!.run_id);
    const storedIds = new Set(stored.map((e) => e.event_id));
    expect(storedIds.size).toBe(stored.length); // none twice
    for (const id of ids) expect(storedIds.has(id)).toBe(true); // every acknowledged event
    expect(run!.event_count).toBe(stored.length);
    expect(run!.error_count).toBe(stored.filter((e) => e.event_type === "error").length);
  }
  // total_runs: each run with a stored run_start counted once per agent.
  const starts = new Map<string, number>();
  for (const r of runs) if (r.agent_name) starts.set(r.agent_name, (starts.get(r.agent_name) ?? 0) + 1);
  const agents = await ports.sql.query<{ name: string; total_runs: string }>("SELECT name, total_runs FROM agents WHERE project_id = $1", [userId]);
  expect(new Map(agents.map((a) => [a.name, Number(a.total_runs)]))).toEqual(starts);
}, 180_000);

/**
 * Durability: `runwatch start` as a child process, a burst of ingests, SIGKILL right after the last counted
 * 202 (more requests still in flight), restart on the same data dir: every acknowledged event is in
 * GET /api/runs/{id}, and no event is there twice.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { childServerEnv, json, startChildServer, runwatchCli as cli, waitForRun } from "./harness.js";


const children = new Set<ChildProcess>();
let dataDir = "";
afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

const startServer = (env: NodeJS.ProcessEnv, url: string) => startChildServer(env, url, children);

describe("crash safety", () => {
  it("every 202 survives kill -9 and a restart, exactly once", async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-crash-"));
    // In scale mode, a topic and database of this run's own: runs of an earlier pass on the same servers keep their
    // names (crash-run-N) and their user's id, and would add their events to this run's.
    const tag = path.basename(dataDir).replace(/[^a-z0-9]/gi, "").slice(-10).toLowerCase();
    const { env, url } = await childServerEnv(dataDir, {
      NODE_ENV: "test", LOG_LEVEL: "warn", RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000",
      KAFKA_TOPIC: `runwatch.test.crash.${tag}`, CLICKHOUSE_DATABASE: `runwatch_test_crash_${tag}`,
    });
    cli({ ...env, RUNWATCH_PASSWORD: "crash-test-pw" }, "user", "create", "--email", "crash@example.com", "--name", "Crash");
    const key = cli(env, "key", "create", "--email", "crash@example.com", "--name", "crash");
    expect(key).toMatch(/^[0-9a-f]{64}$/);

    const first = await startServer(env, url);
    const runs = Array.from({ length: 6 }, (_, i) => `crash-run-${i}`);
    const acked = new Map<string, string>(); // event_id → sdk_run_id
    const TARGET = 1500;
    let killed = false;
    let next = 0;

    const one = async (): Promise<void> => {
      while (!killed) {
        const n = next++;
        const sdk = runs[n % runs.length]!;
        const batch = n % 10 === 0;
        const mk = (j: number) => (n < runs.length && j === 0
          ? { event_type: "run_start", sdk_run_id: sdk, agent_name: "crasher", payload: {} }
          : { event_type: "step", sdk_run_id: sdk, payload: { node_name: `n${n}-${j}`, phase: "end" } });
        try {
          const res = batch
            ? await fetch(`${url}/api/ingest/batch`, json(key, { events: Array.from({ length: 20 }, (_, j) => mk(j)) }))
            : await fetch(`${url}/api/ingest`, json(key, mk(0)));
          if (killed) return; // an answer after the kill decision is not counted
          if (res.status === 202) {
            acked.set(((await res.json()) as { event_id: string }).event_id, sdk);
          } else if (res.status === 207) {
            for (const r of ((await res.json()) as { results: { status: number; event_id: string }[] }).results) {
              expect(r.status).toBe(202);
              acked.set(r.event_id, sdk);
            }
          } else {
            throw new Error(`unexpected ${res.status}: ${await res.text()}`);
          }
          if (acked.size >= TARGET && !killed) {
            killed = true;
            first.child.kill("SIGKILL");
          }
        } catch (err) {
          if (killed) return; // connections die with the server
          throw err;
        }
      }
    };
    await Promise.all(Array.from({ length: 24 }, one));
    await new Promise<void>((r) => (first.child.exitCode !== null || first.child.signalCode ? r() : first.child.once("exit", () => r())));
    expect(first.child.signalCode).toBe("SIGKILL");
    expect(acked.size).toBeGreaterThanOrEqual(TARGET);

    const second = await startServer(env, url);
    try {
      for (const sdk of runs) {
        const want = [...acked].filter(([, s]) => s === sdk).map(([id]) => id);
        // Events are stored before the run row is rewritten: wait for both to settle.
        const body = await waitForRun(url, key, sdk, (b) => b.run.event_count === b.events.length && want.every((id) => b.events.some((e) => e.event_id === id)), 60_000)
          .catch((err) => { throw new Error(`${err.message}\nserver output:\n${second.output()}`); });
        const ids = body.events.map((e) => e.event_id as string);
        expect(new Set(ids).size, `duplicate events in ${sdk}`).toBe(ids.length);
        expect(body.run.event_count).toBe(ids.length);
      }
    } finally {
      second.child.kill("SIGTERM");
      await new Promise<void>((r) => (second.child.exitCode !== null ? r() : second.child.once("exit", () => r())));
    }
    expect(second.child.exitCode).toBe(0);
  }, 180_000);
});

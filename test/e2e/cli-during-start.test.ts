/**
 * A CLI command run while `runwatch start` is still starting never writes beside the server (deploy/data-dir-lock.ts,
 * deploy/admin-client.ts): right after the spawn, and in the first moment the web port accepts connections, `user
 * create` either reaches the server's admin socket or does its work before the server opens the stores, and what it
 * wrote is there afterwards (`key create` finds the user; the key is taken by the API).
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { childServerEnv, json, runwatchCli as cli } from "./harness.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const children = new Set<ChildProcess>();
const dirs: string[] = [];
afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
});

const accepts = (port: number) => new Promise<boolean>((resolve) => {
  const s = net.connect(port, "127.0.0.1", () => { s.destroy(); resolve(true); });
  s.on("error", () => resolve(false));
});

async function startAndCreate(waitForPort: boolean) {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-cli-start-"));
  dirs.push(dataDir);
  const tag = path.basename(dataDir).replace(/[^a-z0-9]/gi, "").slice(-10).toLowerCase();
  const { env, url } = await childServerEnv(dataDir, { NODE_ENV: "test", LOG_LEVEL: "error", KAFKA_TOPIC: `runwatch.test.clistart.${tag}`, CLICKHOUSE_DATABASE: `runwatch_test_clistart_${tag}` });
  // The build first, so the server's start is not the build's.
  cli(env, "--help");
  const child = spawn(process.execPath, [path.join(ROOT, "deploy/bin/runwatch.mjs"), "start"], { cwd: ROOT, env, stdio: "ignore" });
  children.add(child);
  if (waitForPort) {
    const port = Number(new URL(url).port);
    for (const end = Date.now() + 60_000; !(await accepts(port)) && Date.now() < end;) await new Promise((r) => setTimeout(r, 10));
  }
  const email = `early-${tag}@example.com`;
  cli({ ...env, RUNWATCH_PASSWORD: "correct horse battery" }, "user", "create", "--email", email, "--name", "Early");
  const key = cli(env, "key", "create", "--email", email, "--name", "early");
  for (const end = Date.now() + 60_000; !(await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) && Date.now() < end;) await new Promise((r) => setTimeout(r, 100));
  const res = await fetch(`${url}/api/ingest`, json(key, { event_type: "run_start", sdk_run_id: "early", agent_name: "early", payload: {} }));
  expect(res.status).toBe(202);
  expect(child.exitCode).toBeNull();
  child.kill("SIGTERM");
}

describe("CLI commands while the server starts", () => {
  it("right after the spawn: the write lands and the server then serves it", async () => {
    await startAndCreate(false);
  }, 120_000);

  it("in the first moment the web port accepts: the write goes through the server", async () => {
    await startAndCreate(true);
  }, 120_000);
});

/**
 * dist/ is rebuilt under running servers without breaking them (deploy/build.mjs): a server starts while builds
 * run beside it, more builds run while it serves, and it still loads its lazily started modules (the ingest
 * decode threads for a large batch) and stores what it acknowledged; its build is not deleted while it runs.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readlinkSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { childServerEnv, json, runwatchCli as cli, startChildServer, waitForRun } from "./harness.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const children = new Set<ChildProcess>();
let dataDir = "";
afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

/** `node deploy/build.mjs` as a child; resolves with its exit code, and what it printed when that is not 0. */
const rebuild = () => new Promise<number | string>((resolve) => {
  const c = spawn(process.execPath, [path.join(ROOT, "deploy/build.mjs")], { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  c.stderr!.on("data", (d) => (stderr += d));
  c.on("close", (code) => resolve(code === 0 ? 0 : `exit ${code}: ${stderr.slice(-2000)}`));
});

describe("rebuilding dist/ under a running server", () => {
  it("a server started during rebuilds comes up, keeps serving through more of them, and its build stays", async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-rebuild-"));
    const tag = path.basename(dataDir).replace(/[^a-z0-9]/gi, "").slice(-10).toLowerCase();
    const { env, url } = await childServerEnv(dataDir, {
      NODE_ENV: "test", LOG_LEVEL: "error", RUNWATCH_INGEST_INLINE_BYTES: "0",
      KAFKA_TOPIC: `runwatch.test.rebuild.${tag}`, CLICKHOUSE_DATABASE: `runwatch_test_rebuild_${tag}`,
    });
    const email = `rebuild-${tag}@example.com`;
    cli({ ...env, RUNWATCH_PASSWORD: "correct horse battery" }, "user", "create", "--email", email, "--name", "Rebuild");
    const key = cli(env, "key", "create", "--email", email, "--name", "rebuild");

    const during = Promise.all([rebuild(), rebuild()]);
    const { child } = await startChildServer(env, url, children);
    expect(await during).toEqual([0, 0]);
    const pidFiles = () => readdirSync(path.join(ROOT, ".dist-builds")).filter((b) => existsSync(path.join(ROOT, ".dist-builds", b, ".pids", String(child.pid))));
    expect(pidFiles()).toHaveLength(1);
    const own = pidFiles()[0]!;

    expect(await Promise.all([rebuild(), rebuild()])).toEqual([0, 0]);
    expect(readlinkSync(path.join(ROOT, "dist"))).not.toContain(own);
    // A batch decoded on a decode thread (inline decoding off), whose module loads now, from the server's own build.
    const events = [
      { event_type: "run_start", sdk_run_id: "after-rebuild", agent_name: "rebuild", payload: {} },
      ...Array.from({ length: 50 }, (_, i) => ({ event_type: "tool_call", sdk_run_id: "after-rebuild", payload: { tool_name: "t", phase: "end", output_preview: "x".repeat(100), i } })),
      { event_type: "run_end", sdk_run_id: "after-rebuild", payload: {} },
    ];
    expect((await fetch(`${url}/api/ingest/batch`, json(key, { events }))).status).toBe(207);
    await waitForRun(url, key, "after-rebuild", (b) => b.run.status === "success" && b.run.event_count === 52);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(existsSync(path.join(ROOT, ".dist-builds", own))).toBe(true);
    expect(child.exitCode).toBeNull();
  }, 120_000);
});

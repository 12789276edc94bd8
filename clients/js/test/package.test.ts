/**
 * The package as users get it: built by its own tsconfig, no runtime dependencies, importable from a
 * directory with no node_modules, no node:* imports, and well-behaved at process exit.
 */
import { execFile, spawn } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoopbackServer, freePort } from "./loopback.js";

const run = promisify(execFile);
const pkgDir = path.resolve(import.meta.dirname, "..");
const repoRoot = path.resolve(pkgDir, "../..");
let tmp: string;
let isolated: string;

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-js-pkg-"));
  isolated = path.join(tmp, "runwatch");
  await fs.mkdir(isolated);
  // Build exactly as `npm run build` / `prepare` does, into a private directory (other test files may be
  // reading clients/js/dist at the same time), then lay it out as the published package.
  await run(process.execPath, [path.join(repoRoot, "node_modules/typescript/bin/tsc"), "-p", path.join(pkgDir, "tsconfig.json"), "--outDir", path.join(isolated, "dist")]).catch(
    (err: { stdout?: string; message: string }) => {
      throw new Error(`the build failed:\n${err.stdout ?? ""}${err.message}`);
    },
  );
  await fs.copyFile(path.join(pkgDir, "package.json"), path.join(isolated, "package.json"));
}, 120_000);

afterAll(async () => {
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

async function nodeScript(code: string, env: Record<string, string> = {}, timeoutMs = 20_000) {
  const file = path.join(isolated, `script-${Math.random().toString(36).slice(2)}.mjs`);
  await fs.writeFile(file, code);
  return new Promise<{ code: number | null; stdout: string; stderr: string; ms: number }>((resolve, reject) => {
    const t0 = Date.now();
    const child = spawn(process.execPath, [file], { cwd: isolated, env: { PATH: process.env.PATH ?? "", ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const killer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr, ms: Date.now() - t0 });
    });
  });
}

describe("package", () => {
  it("has no runtime dependencies: `npm ls --omit=dev` inside clients/js lists none", async () => {
    const pkg = JSON.parse(await fs.readFile(path.join(pkgDir, "package.json"), "utf8"));
    expect(pkg.dependencies).toBeUndefined();
    expect(pkg.peerDependencies).toBeUndefined();
    const { stdout } = await run("npm", ["ls", "--omit=dev", "--all", "--json"], { cwd: pkgDir });
    const tree = JSON.parse(stdout);
    // In the monorepo npm reports from the workspace root; the runwatch node must have no children.
    const node = tree.name === "runwatch" ? tree : tree.dependencies?.runwatch;
    expect(node).toBeDefined();
    expect(node.dependencies ?? {}).toEqual({});
  });

  it("the build has ESM, declarations for both entry points, and no node:* imports or require()", async () => {
    const files = await fs.readdir(path.join(isolated, "dist"));
    for (const f of ["index.js", "index.d.ts", "langchain.js", "langchain.d.ts"]) expect(files).toContain(f);
    for (const f of files.filter((x) => x.endsWith(".js"))) {
      const src = await fs.readFile(path.join(isolated, "dist", f), "utf8");
      expect(src, f).not.toMatch(/from\s+["']node:|import\(["']node:|require\(/);
      expect(src, f).not.toMatch(/from\s+["']@langchain\//);
    }
  });

  it("imports from a directory with no node_modules (both entry points, via the exports map)", async () => {
    await expect(fs.access(path.join(tmp, "node_modules"))).rejects.toThrow();
    const r = await nodeScript(`
      import { Runwatch, uuidv7 } from "runwatch";
      import { CallbackHandler, createCallbackHandler } from "runwatch/langchain";
      const h = new CallbackHandler({ client: new Runwatch({ apiKey: "k" }) });
      console.log(JSON.stringify({ client: typeof Runwatch, id: uuidv7().length, chain: typeof h.handleChainStart, f: typeof createCallbackHandler, hasName: "name" in h }));
    `);
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual({ client: "function", id: 36, chain: "function", f: "function", hasName: false });
  });

  it("flushes queued events on beforeExit when the script does not", async () => {
    const server = await new LoopbackServer().start();
    try {
      const r = await nodeScript(
        `
        import { Runwatch } from "runwatch";
        const client = new Runwatch();
        await client.run({ agentName: "exit-agent", sdkRunId: "exit-1" }, async (run) => run.step("only", () => 1));
        console.log("done");
      `,
        { RUNWATCH_API_KEY: "b".repeat(64), RUNWATCH_BASE_URL: server.url },
      );
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe("done");
      expect(server.accepted.map((e) => e.event_type)).toEqual(["run_start", "step", "step", "run_end"]);
      expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${"b".repeat(64)}`);
    } finally {
      await server.stop();
    }
  });

  it("runs where there is no \`process\` at all (edge runtimes, browsers): explicit flush delivers", async () => {
    const server = await new LoopbackServer().start();
    try {
      const r = await nodeScript(`
        Object.defineProperty(globalThis, "process", { value: undefined, configurable: true, writable: true });
        const { Runwatch } = await import("runwatch");
        const client = new Runwatch({ apiKey: "${"e".repeat(64)}", baseUrl: "${server.url}" });
        const out = await client.run({ agentName: "edge-agent", sdkRunId: "edge-1" }, async (run) => run.toolCall("t", { a: 1 }, () => "ok"));
        console.log(JSON.stringify({ out, hidden: typeof process, flushed: await client.flush(5000) }));
      `);
      expect(r.stderr).toBe("");
      expect(JSON.parse(r.stdout)).toEqual({ out: "ok", hidden: "undefined", flushed: true });
      expect(server.accepted.map((e) => e.event_type)).toEqual(["run_start", "tool_call", "tool_call", "run_end"]);
    } finally {
      await server.stop();
    }
  });

  it("never keeps a process alive: with the server down the script exits promptly, without throwing", async () => {
    const port = await freePort();
    const r = await nodeScript(
      `
      import { Runwatch } from "runwatch";
      const client = new Runwatch({ backoffBaseMs: 5000 });
      for (let i = 0; i < 100; i++) client.emit("r", "a", "step", { node_name: "n", phase: "start" });
      console.log("done");
    `,
      { RUNWATCH_API_KEY: "c".repeat(64), RUNWATCH_BASE_URL: `http://127.0.0.1:${port}` },
    );
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("done");
    expect(r.ms).toBeLessThan(4000);
  });

  it("with the server down and a retry backing off, a finished script exits within a second of its last work", async () => {
    const port = await freePort();
    const r = await nodeScript(
      `
      import { Runwatch } from "runwatch";
      const client = new Runwatch({ backoffBaseMs: 30000, backoffMaxMs: 60000, flushIntervalMs: 20 });
      client.emit("r", "a", "step", { node_name: "n", phase: "start" });
      // Work goes on long enough for the first send to fail and a long backoff (up to 30 s, jittered) to start.
      await new Promise((r) => setTimeout(r, 500));
      client.emit("r", "a", "step", { node_name: "n", phase: "end" });
      console.log(Date.now());
    `,
      { RUNWATCH_API_KEY: "c".repeat(64), RUNWATCH_BASE_URL: `http://127.0.0.1:${port}` },
    );
    const end = Date.now();
    expect(r.code).toBe(0);
    expect(end - Number(r.stdout.trim())).toBeLessThan(1000);
  });
});

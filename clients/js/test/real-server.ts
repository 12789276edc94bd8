/**
 * A real Runwatch server for client tests: `node deploy/bin/runwatch.mjs start` from the repo root as a child
 * process, on a temporary data dir and free ports, plus a user and an API key made with the CLI.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort } from "./loopback.js";

const run = promisify(execFile);
export const repoRoot = path.resolve(import.meta.dirname, "../../..");
const cli = path.join(repoRoot, "deploy/bin/runwatch.mjs");

export const PASSWORD = "correct horse battery staple";

export interface RealServer {
  url: string;
  key: string;
  /** The key's user, who may sign in to the dashboard with PASSWORD. */
  email: string;
  dataDir: string;
  log(): string;
  stop(): Promise<void>;
}

/**
 * Starts the server; a port that another process took between its choice and the server's listen (free ports are
 * chosen before the child binds them, and parallel test files bind ports too) is retried with new ports.
 */
export async function startRealServer(extraEnv: Record<string, string> = {}): Promise<RealServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(extraEnv);
    } catch (err) {
      if (attempt >= 3 || !/could not listen|EADDRINUSE/.test(String(err))) throw err;
    }
  }
}

async function startOnce(extraEnv: Record<string, string>): Promise<RealServer> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-js-client-"));
  const [web, gateway, agents] = [await freePort(), await freePort(), await freePort()];
  const env = {
    ...process.env,
    RUNWATCH_DATA_DIR: dataDir,
    RUNWATCH_WEB_PORT: String(web),
    RUNWATCH_GATEWAY_PORT: String(gateway),
    RUNWATCH_AGENTS_PORT: String(agents),
    RUNWATCH_OTLP_GRPC_PORT: String(await freePort()),
    RUNWATCH_RETENTION_SWEEP_MS: "0", // no sweep of other test users' data in a shared scale database
    RUNWATCH_HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    NODE_ENV: "test",
    // In the scale pass servers share Postgres: an evaluation worker would take other tests' jobs.
    RUNWATCH_EVALUATION_CONCURRENCY: "0",
    ...extraEnv,
  };
  const child: ChildProcess = spawn(process.execPath, [cli, "start"], { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(killer);
    }
    await fs.rm(dataDir, { recursive: true, force: true });
  };

  try {
    const deadline = Date.now() + 90_000;
    while (!output.includes("Runwatch is running")) {
      if (child.exitCode !== null) throw new Error(`runwatch start exited with ${child.exitCode}:\n${output}`);
      if (Date.now() > deadline) throw new Error(`runwatch start did not come up in 90 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const email = `js-client-${Date.now()}@example.com`;
    await run(process.execPath, [cli, "user", "create", "--email", email, "--name", "JS Client", "--password", PASSWORD], { cwd: repoRoot, env });
    const { stdout } = await run(process.execPath, [cli, "key", "create", "--email", email, "--name", "js-client-test"], { cwd: repoRoot, env });
    const key = stdout.trim().split(/\s+/).pop()!;
    if (!/^[0-9a-f]{64}$/.test(key)) throw new Error(`unexpected key output: ${stdout}`);
    return { url: `http://127.0.0.1:${web}`, key, email, dataDir, log: () => output, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

export interface RunView {
  run: Record<string, any>;
  events: { event_type: string; payload: Record<string, any>; occurred_at: string; event_id: string }[];
}

/** Polls GET /api/runs/{sdk_run_id} until `done` accepts the answer (the pipeline stores events asynchronously). */
export async function waitForRun(server: RealServer, sdkRunId: string, done: (v: RunView) => boolean, timeoutMs = 30_000): Promise<RunView> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const r = await fetch(`${server.url}/api/runs/${encodeURIComponent(sdkRunId)}`, { headers: { authorization: `Bearer ${server.key}` } });
    last = r.status === 200 ? await r.json() : `${r.status} ${await r.text()}`;
    if (r.status === 200 && done(last as RunView)) return last as RunView;
    if (Date.now() > deadline) throw new Error(`run ${sdkRunId} did not reach the expected state; last answer: ${JSON.stringify(last).slice(0, 3000)}`);
    await new Promise((res) => setTimeout(res, 150));
  }
}

/**
 * The dashboard as the server's user: signs in, then posts forms with the page's CSRF token (what a browser does),
 * for what only the dashboard sets up (agents, config versions, gate rules).
 */
export async function dashboard(server: RealServer): Promise<{ form(path: string, fields: Record<string, string>): Promise<Response> }> {
  let cookie = "";
  const remember = (res: Response) => {
    const jar = new Map(cookie.split("; ").filter(Boolean).map((c) => c.split("=", 2) as [string, string]));
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const [name, value] = pair!.split("=", 2);
      jar.set(name!, value ?? "");
    }
    cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  };
  const csrfOf = async (path: string): Promise<string> => {
    const res = await fetch(`${server.url}${path}`, { headers: { cookie }, redirect: "manual" });
    remember(res);
    // A project page asked for without its project (/dashboard) is the remembered project's (/p/{slug}/dashboard).
    const to = res.headers.get("location");
    if (res.status === 302 && to?.startsWith("/p/")) return csrfOf(to);
    return /name="_csrf" value="([^"]+)"/.exec(await res.text())?.[1] ?? "";
  };
  const post = async (path: string, fields: Record<string, string>, csrf: string) => {
    const res = await fetch(`${server.url}${path}`, { method: "POST", headers: { cookie, "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ _csrf: csrf, ...fields }), redirect: "manual" });
    remember(res);
    return res;
  };
  const login = await post("/login", { email: server.email, password: PASSWORD }, await csrfOf("/login"));
  if (login.status !== 302 && login.status !== 303) throw new Error(`could not sign in: ${login.status}`);
  return { form: async (path, fields) => post(path, fields, await csrfOf("/dashboard")) };
}

/**
 * In the scale pass (DATABASE_URL set), a Postgres database, Kafka topic and ClickHouse database of the server's own,
 * for a test whose server runs an evaluation worker: on shared ones it would take other tests' jobs, and theirs its.
 * Embedded (no DATABASE_URL), nothing: the data dir is the server's own.
 */
export async function ownScaleStores(): Promise<Record<string, string>> {
  const url = process.env.DATABASE_URL;
  if (!url) return {};
  const { default: pg } = await import("pg");
  const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE runwatch_js_${tag}`);
  } finally {
    await admin.end();
  }
  const own = new URL(url);
  own.pathname = `/runwatch_js_${tag}`;
  return { DATABASE_URL: own.toString(), KAFKA_TOPIC: `runwatch.test.js.${tag}`, CLICKHOUSE_DATABASE: `runwatch_js_${tag}` };
}

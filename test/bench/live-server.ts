/**
 * The server a latency benchmark measures: `runwatch start` as a child process (embedded default) on free ports
 * over a temporary data dir, a user with an API key, and a dashboard WebSocket subscription (log in like a
 * browser, get a realtime token, subscribe) that records when each event's frame arrives.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { spawnThread } from "../../core/threads/spawn.js";
import { CookieJar, csrfFrom, freePort, NPM_START_ENV } from "../e2e/harness.js";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const cli = path.join(root, "deploy/bin/runwatch.mjs");

export interface LiveServer {
  readonly base: string;
  readonly key: string;
  readonly env: NodeJS.ProcessEnv;
  readonly pid: number;
  /** performance.now() (of this thread) when each event's frame arrived, by event id. */
  readonly arrived: Map<string, number>;
  /** Why the dashboard socket closed (the gateway drops a consumer that falls 1 MiB behind), if it did. */
  socketClosed(): string | undefined;
  stop(): Promise<void>;
}

export async function startLiveServer(roles: string, extraEnv: Record<string, string> = {}, nodeArgs: readonly string[] = []): Promise<LiveServer> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-bench-"));
  const [webPort, gatewayPort, agentsPort] = [await freePort(), await freePort(), await freePort()];
  const env = {
    ...process.env,
    ...NPM_START_ENV,
    RUNWATCH_DATA_DIR: dataDir, RUNWATCH_HOST: "127.0.0.1", LOG_LEVEL: "warn",
    RUNWATCH_WEB_PORT: String(webPort), RUNWATCH_GATEWAY_PORT: String(gatewayPort), RUNWATCH_AGENTS_PORT: String(agentsPort), RUNWATCH_OTLP_GRPC_PORT: "off",
    RUNWATCH_PUBLIC_GATEWAY_URL: `ws://127.0.0.1:${gatewayPort}`,
    RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000000", RUNWATCH_EVENT_QUOTA_PER_MINUTE: "0",
    ...extraEnv,
  };
  const base = `http://127.0.0.1:${webPort}`;
  if (process.env.BENCH_LOG_LEVEL) env.LOG_LEVEL = process.env.BENCH_LOG_LEVEL; // "debug": the pipeline's per-batch stage timings
  const server = spawn(process.execPath, [...nodeArgs, cli, "start", "--role", roles], { env, stdio: ["ignore", "pipe", "inherit"] });
  const stop = async () => {
    if (server.exitCode === null) {
      server.kill("SIGTERM");
      await new Promise((r) => server.once("exit", r));
    }
    await fs.rm(dataDir, { recursive: true, force: true });
  };
  try {
    await waitFor(server, /Runwatch is running/, 120_000);
    const email = "bench@example.com", password = "bench password 123";
    await runCli({ ...env, RUNWATCH_PASSWORD: password }, ["user", "create", "--email", email, "--name", "Bench"]);
    const key = /[0-9a-f]{64}/.exec(await runCli(env, ["key", "create", "--email", email, "--name", "bench"]))![0];
    const jar = new CookieJar();
    const csrf = csrfFrom(await (await jar.fetch(`${base}/login`)).text());
    const login = await jar.form(`${base}/login`, { _csrf: csrf, email, password, next: "/dashboard" });
    if (login.status !== 302 && login.status !== 303) throw new Error(`login failed: ${login.status}`);
    const info = (await (await jar.fetch(`${base}/api/realtime/token`)).json()) as { url: string; channel: string; protocols: string[] };
    const arrived = new Map<string, number>();
    const subscriber = spawnThread(new URL("./live-subscriber.ts", import.meta.url), info, "live-subscriber");
    let closed: string | undefined;
    await new Promise<void>((resolve, reject) => {
      subscriber.on("error", reject);
      subscriber.on("message", (m: { type: string; frames?: [string, number][]; code?: number; message?: string }) => {
        if (m.type === "subscribed") resolve();
        else if (m.type === "arrived") for (const [id, epoch] of m.frames!) arrived.set(id, epoch - performance.timeOrigin);
        else if (m.type === "closed" || m.type === "error") {
          closed = m.message ?? `code ${m.code}`;
          reject(new Error(`the dashboard socket closed: ${closed}`));
        }
      });
    });
    return {
      base, key, env, pid: server.pid!, arrived,
      socketClosed: () => closed,
      stop: async () => {
        subscriber.postMessage("close");
        await subscriber.terminate();
        await stop();
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Resident memory of a process (Linux /proc), in MiB. */
export async function rssMiB(pid: number): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

/**
 * CPU seconds a process has used so far, every thread (Linux /proc: utime + stime, in clock ticks of 1/100 s —
 * USER_HZ is 100 on every Linux this runs on).
 */
export async function cpuSeconds(pid: number): Promise<number> {
  return statCpuSeconds(await fs.readFile(`/proc/${pid}/stat`, "utf8"));
}

/** utime + stime of a /proc stat line (a process's or a thread's), in seconds. */
function statCpuSeconds(stat: string): number {
  // The fields after the command name, which may itself hold spaces and parentheses.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime and stime are fields 14 and 15 of stat(5)
}

/** A process's threads by id: OS name and CPU seconds so far. */
export type ThreadCpu = Map<number, { name: string; seconds: number }>;

/** CPU seconds of each live thread of a process, by thread id, with its OS name (Linux /proc). */
export async function threadCpuSeconds(pid: number): Promise<ThreadCpu> {
  const out: ThreadCpu = new Map();
  for (const tid of await fs.readdir(`/proc/${pid}/task`).catch(() => [] as string[])) {
    try {
      const [name, stat] = await Promise.all([fs.readFile(`/proc/${pid}/task/${tid}/comm`, "utf8"), fs.readFile(`/proc/${pid}/task/${tid}/stat`, "utf8")]);
      out.set(Number(tid), { name: name.trim(), seconds: statCpuSeconds(stat) });
    } catch {
      // the thread exited between the listing and the read
    }
  }
  return out;
}

/**
 * Where a server's CPU went between two threadCpuSeconds snapshots, by kind of thread: the threads Runwatch names
 * (core/threads/spawn.ts), the main thread, chDB's engine threads (named by ClickHouse), and the rest (V8's GC and
 * compiler threads and libuv's pool, which runs the log's writes and chDB's calls; Node leaves them all "node").
 * What threads that exited in between used is the process's total minus the sum.
 */
export function cpuByThreadKind(
  pid: number, before: ThreadCpu, after: ThreadCpu, processSeconds: number,
): string {
  const kinds = new Map<string, number>();
  let sum = 0;
  for (const [tid, t] of after) {
    const used = t.seconds - (before.get(tid)?.seconds ?? 0);
    const kind = tid === pid ? "main" : t.name.startsWith("rw-") ? t.name.slice(3) : t.name === "node" ? "V8 GC/compiler + libuv pool" : "chDB engine";
    kinds.set(kind, (kinds.get(kind) ?? 0) + used);
    sum += used;
  }
  if (processSeconds - sum > 0.05) kinds.set("exited threads", processSeconds - sum);
  return [...kinds].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toFixed(1)} s`).join(", ");
}

function waitFor(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let buf = "";
    const t = setTimeout(() => reject(new Error(`server did not start: ${buf}`)), timeoutMs);
    child.stdout!.on("data", (d) => {
      if (process.env.BENCH_LOG_LEVEL) process.stderr.write(d);
      buf += d;
      if (pattern.test(buf)) { clearTimeout(t); resolve(); }
    });
    child.once("exit", (code) => { clearTimeout(t); reject(new Error(`server exited with ${code}: ${buf}`)); });
  });
}

function runCli(env: NodeJS.ProcessEnv, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [cli, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (out += d));
    p.once("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`runwatch ${args.join(" ")} failed (${code}): ${out}`))));
  });
}

/**
 * What the pipeline's shortcuts answered during the run, from its own counters (GET /healthz?verbose=1,
 * docs/PIPELINE.md "Counters"): one line, for the bench's output. Empty when the server sent none.
 */
export async function pipelineCountersLine(base: string): Promise<string> {
  const body = (await (await fetch(`${base}/healthz?verbose=1`)).json()) as { pipeline?: { counters?: { counters: Record<string, number> } | null } };
  const c = body.pipeline?.counters?.counters;
  if (!c) return "";
  const share = (part: number, whole: number) => (whole > 0 ? `${Math.round((part / whole) * 100)} %` : "n/a");
  return `pipeline counters: ${c.events_stored} events stored, ${c.events_duplicate} duplicates, ${c.parts} parts;` +
    ` runs found in memory ${share(c.run_records_hit, c.run_records_hit + c.run_records_missed)},` +
    ` runs not in memory spared a load (new) ${share(c.runs_new, c.run_records_missed)},` +
    ` duplicate checks without a look-up ${share(c.events_known, c.events_known + c.events_looked_up)},` +
    ` cost rows per run version written ${share(c.cost_rows_written, c.run_versions_written)}, runs recounted ${c.runs_recounted}`;
}

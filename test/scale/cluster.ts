/**
 * Starts Runwatch role processes the way an operator would (`node deploy/bin/runwatch.mjs start --role X`),
 * each on its own free port and data dir, sharing one scale-mode environment (a topic and ClickHouse
 * database of their own, one session secret), and tears them down. Also creates users and keys with the CLI.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { freePort } from "../e2e/harness.js";

export const ROOT = path.resolve(new URL("../..", import.meta.url).pathname);
const CLI = path.join(ROOT, "deploy/bin/runwatch.mjs");

export { freePort };

export type RoleName = "web" | "pipeline" | "gateway";

export interface RoleProcess {
  readonly role: RoleName;
  readonly name: string;
  /** http://… for web, ws://… for gateway. */
  url: string | undefined;
  /** The OTLP/gRPC port of a web process. */
  readonly otlpGrpcPort: number;
  child: ChildProcess;
  output: string[];
  /** kill -9, or a clean SIGTERM stop. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the same role again on the same port. */
  restart(): Promise<void>;
}

export interface Cluster {
  readonly env: NodeJS.ProcessEnv;
  readonly secret: string;
  readonly procs: RoleProcess[];
  byRole(role: RoleName): RoleProcess[];
  start(role: RoleName, name?: string): Promise<RoleProcess>;
  cli(args: string[], input?: string): string;
  /** A user with one API key: { userId, key }. */
  createUserWithKey(): { userId: number; key: string; email: string };
  stop(): Promise<void>;
}

export async function startCluster(opts: { roles: Partial<Record<RoleName, number>>; env?: NodeJS.ProcessEnv }): Promise<Cluster> {
  const secret = randomBytes(32).toString("hex");
  const tag = randomUUID().replaceAll("-", "").slice(0, 12);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    KAFKA_TOPIC: `runwatch.test.${tag}`,
    CLICKHOUSE_DATABASE: `runwatch_test_${tag}`,
    SESSION_SECRET: secret,
    LOG_LEVEL: process.env.SCALE_TEST_LOG_LEVEL ?? "warn",
    NODE_ENV: "test",
    ...opts.env,
  };
  const procs: RoleProcess[] = [];

  // Names count starts, not started processes, so two processes starting at once get different names.
  const launched = new Map<RoleName, number>();
  const nextName = (role: RoleName): string => {
    const n = (launched.get(role) ?? 0) + 1;
    launched.set(role, n);
    return `${role}-${n}`;
  };

  async function start(role: RoleName, name = nextName(role)): Promise<RoleProcess> {
    const port = await freePort();
    const dataDir = mkdtempSync(path.join(os.tmpdir(), `rw-${name}-`));
    const procEnv = {
      ...env,
      RUNWATCH_DATA_DIR: dataDir,
      RUNWATCH_WEB_PORT: role === "web" ? String(port) : String(await freePort()),
      RUNWATCH_GATEWAY_PORT: role === "gateway" ? String(port) : String(await freePort()),
      RUNWATCH_AGENTS_PORT: String(await freePort()),
      RUNWATCH_OTLP_GRPC_PORT: String(await freePort()),
      // Test processes share the scale databases with other test files' users: no retention sweep of its own.
      RUNWATCH_RETENTION_SWEEP_MS: "0",
    };
    const p: RoleProcess = {
      role, name, url: undefined, otlpGrpcPort: Number(procEnv.RUNWATCH_OTLP_GRPC_PORT), output: [], child: undefined as unknown as ChildProcess,
      kill: async (signal = "SIGKILL") => {
        if (p.child.exitCode !== null || p.child.signalCode !== null) return;
        const exited = new Promise((r) => p.child.once("exit", r));
        p.child.kill(signal);
        await exited;
      },
      restart: async () => { await launch(); },
    };
    async function launch(): Promise<void> {
      const child = spawn(process.execPath, [CLI, "start", "--role", role], { cwd: ROOT, env: procEnv, stdio: ["ignore", "pipe", "pipe"] });
      p.child = child;
      p.url = undefined;
      const keep = (l: string) => { p.output.push(l); if (p.output.length > 400) p.output.shift(); };
      createInterface({ input: child.stderr! }).on("line", keep);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name} did not start within 60 s:\n${p.output.slice(-30).join("\n")}`)), 60_000);
        child.once("exit", (code, sig) => { clearTimeout(timer); reject(new Error(`${name} exited (${code ?? sig}) during start:\n${p.output.slice(-30).join("\n")}`)); });
        createInterface({ input: child.stdout! }).on("line", (l) => {
          keep(l);
          const m = new RegExp(`^\\s+${role}\\s+(\\S+)`).exec(l);
          if (m && m[1].includes("://")) p.url = m[1];
          if (role === "pipeline" && /^\s+pipeline\s/.test(l)) { clearTimeout(timer); resolve(); }
          if (m && p.url) { clearTimeout(timer); resolve(); }
        });
      });
    }
    try {
      await launch();
    } catch (err) {
      p.child?.kill("SIGKILL"); // it did not come up: not left running after the test
      throw err;
    }
    procs.push(p);
    return p;
  }

  const cli = (args: string[], input?: string): string => {
    const r = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...env, RUNWATCH_DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "rw-cli-")) }, input, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`runwatch ${args.join(" ")} failed (${r.status}):\n${r.stderr}\n${r.stdout}`);
    return r.stdout;
  };

  // Pipelines first (they create the topic's consumer group), then web and gateways, in parallel per role.
  // A process that fails to start fails the cluster, and the ones already up are stopped: the caller never gets a
  // cluster to stop, and they would outlive the test (consuming its topic, holding ports).
  for (const role of ["pipeline", "web", "gateway"] as const) {
    const started = await Promise.allSettled(Array.from({ length: opts.roles[role] ?? 0 }, () => start(role)));
    const failed = started.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) {
      await Promise.allSettled(procs.map((p) => p.kill("SIGKILL")));
      throw failed.reason;
    }
  }

  return {
    env,
    secret,
    procs,
    byRole: (role) => procs.filter((p) => p.role === role),
    start,
    cli,
    createUserWithKey() {
      const email = `scale-${randomUUID()}@test.runwatch.dev`;
      const created = cli(["user", "create", "--email", email, "--name", "Scale Test", "--password-stdin"], "correct horse battery staple\n");
      const userId = Number(/id (\d+)/.exec(created)?.[1]);
      if (!Number.isFinite(userId)) throw new Error(`no user id in: ${created}`);
      const key = cli(["key", "create", "--email", email, "--name", "scale"]).trim().split("\n").pop()!.trim();
      if (!/^[0-9a-f]{64}$/.test(key)) throw new Error(`no key in: ${key}`);
      return { userId, key, email };
    },
    async stop() {
      await Promise.allSettled(procs.map((p) => p.kill("SIGTERM")));
    },
  };
}

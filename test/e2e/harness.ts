/**
 * Test harness: a real Runwatch web server (optionally with the pipeline) on 127.0.0.1:0 over a temporary
 * data dir, plus small HTTP helpers (Bearer requests, a cookie jar for browser-like sessions).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../../core/config.js";
import { openPorts, type Ports } from "../../core/runtime.js";
import { startWeb, type WebServer } from "../../web/server.js";
import { createUser } from "../../stores/accounts/users.js";
import { createApiKey } from "../../stores/accounts/api-keys.js";
import type { SessionUser } from "../../web/deps.js";
import type { KeyScope } from "../../core/access/roles.js";

export interface TestServer {
  readonly url: string;
  readonly dataDir: string;
  readonly ports: Ports;
  readonly web: WebServer;
  user(email?: string): Promise<SessionUser>;
  /** A key of the user's personal project, or of `projectId`; scope read+ingest unless given. */
  key(userId: number, opts?: { expiresAt?: Date | null; name?: string; scope?: KeyScope; projectId?: number }): Promise<string>;
  /** A new user with one API key (the user's password is "correct horse battery"). */
  account(): Promise<TestAccount>;
  close(): Promise<void>;
}

export interface TestAccount {
  readonly id: number;
  readonly email: string;
  readonly key: string;
}

let seq = 0;

export async function startTestServer(
  opts: {
    env?: Record<string, string>;
    pipeline?: boolean;
    pipelineOptions?: import("../../pipeline/runner.js").PipelineOptions;
    /** Also the background jobs a pipeline process runs (deploy/jobs.ts), as `opts.env` configures them. */
    jobs?: boolean;
  } = {},
): Promise<TestServer> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-test-"));
  const config = loadConfig({ RUNWATCH_DATA_DIR: dataDir, NODE_ENV: "test", LOG_LEVEL: "error", RUNWATCH_HOST: "127.0.0.1", ...opts.env });
  const ports = await openPorts(config);
  let pipeline: { stop?: () => Promise<void>; close?: () => Promise<void> } | undefined;
  if (opts.pipeline) {
    const { startPipeline } = await import("../../pipeline/runner.js");
    pipeline = (await startPipeline(ports, opts.pipelineOptions)) as typeof pipeline;
  }
  let jobs: { stop(): Promise<void> } | undefined;
  if (opts.jobs) {
    const { startBackgroundJobs } = await import("../../deploy/jobs.js");
    const { createLogger } = await import("../../core/logger.js");
    jobs = await startBackgroundJobs(ports, config, createLogger("error"), { ...opts.env });
  }
  const web = await startWeb(ports, { port: 0, host: "127.0.0.1", otlpGrpcPort: 0 });
  return {
    url: web.url,
    dataDir,
    ports,
    web,
    user: (email = `user${++seq}-${Date.now()}@example.com`) => createUser(ports.sql, { email, name: "Test User", password: "correct horse battery" }),
    key: async (userId, o = {}) => (await createApiKey(ports.sql, userId, o.name ?? "test", o.expiresAt ?? null, { scope: o.scope, projectId: o.projectId })).key,
    async account() {
      const u = await createUser(ports.sql, { email: `user${++seq}-${Date.now()}@example.com`, name: "Test User", password: "correct horse battery" });
      return { id: u.id, email: u.email, key: (await createApiKey(ports.sql, u.id, "test", null)).key };
    },
    async close() {
      await web.close();
      await (pipeline?.stop ?? pipeline?.close)?.call(pipeline);
      await jobs?.stop();
      await ports.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

export const json = (key: string | undefined, body: unknown, extra: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}), ...extra },
  body: typeof body === "string" ? body : JSON.stringify(body),
});

export const bearer = (key: string): RequestInit => ({ headers: { authorization: `Bearer ${key}` } });

/** Reads until `done` holds (every 100 ms), or fails after `ms` naming what it waited for and the last value read. */
export async function until<T>(what: string, read: () => Promise<T> | T, done: (v: T) => boolean, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: ${JSON.stringify(v).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Reads until `done` holds, for as long as the value read keeps changing: fails only when it stood still for
 * `stallMs`. For long work whose pace is the machine's (a backfill of a thousand judge calls), where a deadline
 * would time the machine, not the product.
 */
export async function untilStalled<T>(what: string, read: () => Promise<T> | T, done: (v: T) => boolean, stallMs = 60_000): Promise<T> {
  let last = "";
  let changedAt = Date.now();
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    const text = JSON.stringify(v);
    if (text !== last) [last, changedAt] = [text, Date.now()];
    else if (Date.now() - changedAt > stallMs) throw new Error(`${what}: no progress in ${stallMs} ms: ${text.slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Polls GET /api/runs/{id} until `done` accepts the answer. */
export async function waitForRun<T = { run: Record<string, any>; events: Record<string, any>[] }>(
  url: string,
  key: string,
  sdkRunId: string,
  done: (body: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const r = await fetch(`${url}/api/runs/${encodeURIComponent(sdkRunId)}`, bearer(key));
    last = r.status === 200 ? await r.json() : `${r.status} ${await r.text()}`;
    if (r.status === 200 && done(last as T)) return last as T;
    if (Date.now() > deadline) throw new Error(`run ${sdkRunId} did not reach the expected state; last answer: ${JSON.stringify(last)}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** A minimal browser cookie jar (name=value only; the server under test sets path=/). */
export class CookieJar {
  private readonly cookies = new Map<string, string>();
  /** Raw Set-Cookie lines seen, for attribute checks. */
  readonly seen: string[] = [];

  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      this.seen.push(line);
      const [pair, ...attrs] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*expires=Thu, 01 Jan 1970/i.test(a)) || value === "";
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  has(name: string): boolean {
    return this.cookies.has(name);
  }

  /**
   * fetch with this jar, never following redirects (tests look at them), but one: a page asked for without its
   * project (`/datasets`) is the same page of the remembered project (`/p/{slug}/datasets`), followed as a browser
   * would, so a test reads the page it named.
   */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set("cookie", this.header());
    const res = await fetch(url, { ...init, headers, redirect: "manual" });
    this.store(res);
    const to = res.headers.get("location");
    const asked = new URL(url);
    if ((init.method ?? "GET") === "GET" && res.status === 302 && to && /^\/p\/[a-z0-9-]+\//.test(to) && to.endsWith(asked.pathname + asked.search)) {
      return this.fetch(new URL(to, url).toString(), init);
    }
    return res;
  }

  /** POSTs an HTML form (urlencoded). */
  form(url: string, fields: Record<string, string>): Promise<Response> {
    return this.fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    });
  }
}

/** The value of the hidden _csrf field of the first form in a page. */
export function csrfFrom(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error("no CSRF field in page");
  return m[1]!;
}

/**
 * A free TCP port on 127.0.0.1, for servers that need their port number before they listen. It is picked at random
 * below Linux's ephemeral range (32768–60999): a port the kernel hands out for listen(0) or for an outgoing
 * connection could be taken by another test's socket between this check and the server's listen.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once("error", () => resolve(false));
      srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "deploy/bin/runwatch.mjs");

/** What `npm start` adds to the server's environment (package.json "start"), so that servers started here run as it does. */
export const NPM_START_ENV = { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? "2" };

/**
 * The environment for a `runwatch start` child process on `dataDir`: 127.0.0.1, free web, gateway and agents
 * ports, then `extra`; `url` is its web address.
 */
export async function childServerEnv(dataDir: string, extra: Record<string, string> = {}): Promise<{ env: NodeJS.ProcessEnv; url: string }> {
  const webPort = await freePort();
  const env = {
    ...process.env,
    ...NPM_START_ENV,
    RUNWATCH_DATA_DIR: dataDir,
    RUNWATCH_HOST: "127.0.0.1",
    RUNWATCH_WEB_PORT: String(webPort),
    RUNWATCH_GATEWAY_PORT: String(await freePort()),
    RUNWATCH_AGENTS_PORT: String(await freePort()),
    RUNWATCH_OTLP_GRPC_PORT: String(await freePort()),
    // In the scale pass test processes share databases: a sweep would delete other test files' users' runs, and an
    // evaluation worker (or a prompt experiments one) would take other tests' jobs (judging them with its own agents-service).
    RUNWATCH_RETENTION_SWEEP_MS: "0",
    RUNWATCH_EVALUATION_CONCURRENCY: "0",
    RUNWATCH_PROMPT_EXPERIMENT_JOBS: "0",
    ...extra,
  };
  return { env, url: `http://127.0.0.1:${webPort}` };
}

/** Runs the `runwatch` CLI with `env`; its trimmed stdout (throws with stderr when it fails). */
export function runwatchCli(env: NodeJS.ProcessEnv, ...args: string[]): string {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, env, encoding: "utf8", timeout: 60_000 });
  if (r.status !== 0) throw new Error(`runwatch ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  return r.stdout.trim();
}

/** A cookie jar logged in as `email` through the real login form (CSRF token included). */
export async function loginJar(url: string, email: string, password = "correct horse battery"): Promise<CookieJar> {
  const jar = new CookieJar();
  const csrf = csrfFrom(await (await jar.fetch(`${url}/login`)).text());
  const res = await jar.form(`${url}/login`, { _csrf: csrf, email, password });
  if (res.status !== 302) throw new Error(`login as ${email} answered ${res.status}`);
  return jar;
}

const CHILD_BIN = path.join(ROOT, "deploy/bin/runwatch.mjs");

/** `runwatch start` as a child process, once its /healthz answers; output() is what it printed. */
export async function startChildServer(
  env: NodeJS.ProcessEnv,
  url: string,
  children: Set<ChildProcess>,
): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [CHILD_BIN, "start"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  child.on("exit", () => children.delete(child));
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${out}`);
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) return { child, output: () => out };
    if (Date.now() > deadline) throw new Error(`server did not come up:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * `runwatch start` as a child process over a new data dir (added to `dirs`, for the caller to remove), with a user
 * and two API keys made by the CLI beforehand (`unusedKey` is never sent by this helper). The Kafka topic and
 * ClickHouse database are the data dir's own in scale mode.
 */
export async function childServerWithAccount(prefix: string, extra: Record<string, string>, children: Set<ChildProcess>, dirs: string[]) {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), `runwatch-${prefix}-`));
  dirs.push(dataDir);
  const tag = path.basename(dataDir).replace(/[^a-z0-9]/gi, "").slice(-10).toLowerCase();
  const { env, url } = await childServerEnv(dataDir, {
    NODE_ENV: "test", LOG_LEVEL: "error", KAFKA_TOPIC: `runwatch.test.${prefix}.${tag}`, CLICKHOUSE_DATABASE: `runwatch_test_${prefix}_${tag}`, ...extra,
  });
  const email = `${prefix}-${tag}@example.com`;
  runwatchCli({ ...env, RUNWATCH_PASSWORD: "correct horse battery" }, "user", "create", "--email", email, "--name", prefix);
  const key = runwatchCli(env, "key", "create", "--email", email, "--name", prefix);
  const unusedKey = runwatchCli(env, "key", "create", "--email", email, "--name", `${prefix}-unused`);
  const { child, output } = await startChildServer(env, url, children);
  return { env, url, email, key, unusedKey, child, output, dataDir };
}

/**
 * In the scale pass (DATABASE_URL set), a Postgres database of its own for a child server that runs an evaluation
 * worker: on the shared one, it would take other test files' jobs and they its. Its ids overlap the shared
 * database's, so it is a deployment of its own on the shared Redis too (REDIS_PREFIX). Embedded, nothing (the data
 * dir is the server's own).
 */
export async function ownPostgres(prefix: string): Promise<Record<string, string>> {
  const url = process.env.DATABASE_URL;
  if (!url) return {};
  const { openPg } = await import("../../core/postgres/pg.js");
  const name = `runwatch_test_${prefix}_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const admin = await openPg(url, { max: 1 });
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.close();
  }
  const own = new URL(url);
  own.pathname = `/${name}`;
  return { DATABASE_URL: own.toString(), REDIS_PREFIX: name };
}

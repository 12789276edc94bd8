/**
 * Ingest benchmark: `npm run bench:ingest` (node --import tsx test/bench/ingest.ts).
 *
 * Starts the embedded server (`runwatch start --role web,pipeline`: the pipeline consumes while we ingest) as a child
 * process on a temporary data dir and free ports, with the per-key limit lifted through
 * RUNWATCH_RATE_LIMIT_PER_MINUTE. Drives it with autocannon from this process and prints, for single and batch
 * ingest: throughput at saturation (req/s, events/s, autocannon), p50/p99 ack latency, then p50/p99 at half that
 * load, sent evenly paced (open loop).
 * A 202/207 is an fsync'd append, so every latency here includes durability.
 *
 * A durable ack costs one fdatasync shared by every request in the group commit, so throughput grows with the
 * number of requests in flight: many agents, many connections.
 *
 * Env: BENCH_DURATION (s, default 10; a paced phase runs at least BENCH_MIN_SAMPLES requests, default 3000), BENCH_CONNECTIONS (single, default 128), BENCH_BATCH_SIZE (default 500),
 * BENCH_BATCH_CONNECTIONS (default 16), BENCH_ROLES (default web,pipeline; "web" measures ingest alone),
 * BENCH_PHASES (default single,batch; or single-max, single-half, single-target, batch-max, batch-half, batch-target),
 * BENCH_LOG_LEVEL (server log level, default warn; "debug" prints the pipeline's per-stage batch timings),
 * BENCH_SERVER_NODE_ARGS (node flags for the server only, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { NPM_START_ENV } from "../e2e/harness.js";
import { httpRequestBytes, pacedLoad, quantile } from "./paced-client.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const BIN = path.join(ROOT, "deploy/bin/runwatch.mjs");
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 128);
const BATCH_SIZE = Number(process.env.BENCH_BATCH_SIZE ?? 500);
const BATCH_CONNECTIONS = Number(process.env.BENCH_BATCH_CONNECTIONS ?? 16);
const ROLES = process.env.BENCH_ROLES ?? "web,pipeline";
/** "single" and "batch" stand for their three phases: -max, -half (of the measured max; needs -max), -target. */
const PHASES = (process.env.BENCH_PHASES ?? "single,batch").split(",").flatMap((p) => (p === "single" || p === "batch" ? [`${p}-max`, `${p}-half`, `${p}-target`] : [p]));
const runs = (phase: string) => PHASES.includes(phase);
const RUNS = 64;
/** A paced phase runs at least long enough for this many requests, so that its p99 is not one stall. */
const MIN_SAMPLES = Number(process.env.BENCH_MIN_SAMPLES ?? 3000);
/** The targets on 2 cores; "half load" is measured both at half the measured maximum and at half these. */
const TARGET_SINGLE_REQ_S = 8_000;
const TARGET_BATCH_EVENTS_S = 50_000;

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });

function cli(env: NodeJS.ProcessEnv, ...args: string[]): string {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, env, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`runwatch ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.trim();
}

const stepEvent = (run: number, i: number) => ({
  event_type: "tool_call",
  sdk_run_id: `bench-run-${run}`,
  payload: { tool_name: "web_search", phase: "end", input_preview: "latest langgraph release notes", output_preview: `result ${i}: LangGraph 1.x adds durable execution and interrupts for human-in-the-loop.`, duration_ms: 123 },
});

interface Phase { reqPerSec: number; eventsPerSec: number; p50: number; p99: number; errors: number; non2xx: number; accepted: number; sendLagP99?: number }

async function drive(url: string, key: string, opts: { batch: boolean; connections: number; rate?: number; duration: number }): Promise<Phase> {
  let conn = 0;
  const perRequest = opts.batch ? BATCH_SIZE : 1;
  const result = await autocannon({
    url: `${url}${opts.batch ? "/api/ingest/batch" : "/api/ingest"}`,
    method: "POST",
    connections: opts.connections,
    duration: opts.duration,
    overallRate: opts.rate,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    setupClient(client: { setBody(b: string): void }) {
      const run = conn++ % RUNS;
      client.setBody(JSON.stringify(opts.batch ? { events: Array.from({ length: BATCH_SIZE }, (_, i) => stepEvent(run, i)) } : stepEvent(run, 0)));
    },
  } as autocannon.Options);
  const ok = result["2xx"];
  return {
    reqPerSec: ok / result.duration,
    eventsPerSec: (ok * perRequest) / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    accepted: ok * perRequest,
  };
}

/** Evenly paced open-loop load at `rate` req/s (paced-client.ts; autocannon's rate option sends bursts). */
async function paced(url: string, key: string, opts: { batch: boolean; rate: number; duration: number }): Promise<Phase> {
  const target = new URL(`${url}${opts.batch ? "/api/ingest/batch" : "/api/ingest"}`);
  const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };
  const requests = Array.from({ length: RUNS }, (_, run) =>
    httpRequestBytes(target, "POST", headers, Buffer.from(JSON.stringify(opts.batch ? { events: Array.from({ length: BATCH_SIZE }, (_, i) => stepEvent(run, i)) } : stepEvent(run, 0)))));
  // A p99 needs samples: at 50 batches/s a 10 s phase has 500 requests and its p99 is the 5th slowest one.
  const seconds = Math.max(opts.duration, Math.ceil(MIN_SAMPLES / opts.rate));
  const r = await pacedLoad(target, requests, { rate: opts.rate, seconds });
  let ok = 0, non2xx = 0;
  for (const [status, n] of r.statuses) {
    if (status === 202 || status === 207) ok += n;
    else non2xx += n;
  }
  return {
    reqPerSec: ok / r.elapsedSeconds,
    eventsPerSec: (ok * (opts.batch ? BATCH_SIZE : 1)) / r.elapsedSeconds,
    p50: Math.round(quantile(r.latencies, 0.5)),
    p99: Math.round(quantile(r.latencies, 0.99)),
    sendLagP99: Math.round(quantile(r.sendLag, 0.99) * 10) / 10,
    errors: r.errors,
    non2xx,
    accepted: ok * (opts.batch ? BATCH_SIZE : 1),
  };
}

/**
 * Whether the pipeline keeps up: waits until the stored runs count `expected` events (every acknowledged one)
 * and reports how long that took after the phase ended, and the pipeline's rate on the backlog it had left.
 */
async function drained(url: string, key: string, expected: number): Promise<string> {
  const t0 = performance.now();
  let first: number | undefined;
  let stored = 0;
  while (performance.now() - t0 < 120_000) {
    const res = await fetch(`${url}/api/runs?limit=500`, { headers: { authorization: `Bearer ${key}` } });
    const { runs } = (await res.json()) as { runs: { event_count: number }[] };
    stored = runs.reduce((n, r) => n + r.event_count, 0);
    first ??= stored;
    const ms = performance.now() - t0;
    if (stored >= expected) {
      const backlog = expected - first;
      return `pipeline drained ${Math.round(ms)} ms after the phase` + (ms > 1000 ? `, ${backlog} events at ${Math.round(backlog / (ms / 1000))}/s` : "");
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return `pipeline NOT drained after 120 s: ${stored} of ${expected} events stored`;
}

const fmt = (p: Phase, label: string) =>
  `${label.padEnd(26)} ${p.reqPerSec.toFixed(0).padStart(8)} req/s ${p.eventsPerSec.toFixed(0).padStart(9)} events/s   p50 ${String(p.p50).padStart(4)} ms   p99 ${String(p.p99).padStart(4)} ms` +
  (p.sendLagP99 !== undefined ? `   (sender lag p99 ${p.sendLagP99} ms)` : "") +
  (p.errors || p.non2xx ? `   (errors ${p.errors}, non-2xx ${p.non2xx})` : "");

async function main() {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-bench-"));
  const webPort = await freePort();
  const env = {
    ...process.env,
    ...NPM_START_ENV,
    NODE_ENV: "production",
    SESSION_SECRET: "bench-".padEnd(64, "x"),
    // Production mode refuses to start web without the secret it shares with agents-service (core/agents/secret.ts).
    AGENT_SECRET: process.env.AGENT_SECRET ?? "bench-agents-".padEnd(64, "x"),
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warn",
    RUNWATCH_DATA_DIR: dataDir,
    RUNWATCH_HOST: "127.0.0.1",
    RUNWATCH_WEB_PORT: String(webPort),
    RUNWATCH_GATEWAY_PORT: String(await freePort()),
    RUNWATCH_AGENTS_PORT: String(await freePort()),
    RUNWATCH_OTLP_GRPC_PORT: "off",
    RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000000", RUNWATCH_EVENT_QUOTA_PER_MINUTE: "0",
  };
  const url = `http://127.0.0.1:${webPort}`;
  let child: ChildProcess | undefined;
  try {
    cli({ ...env, RUNWATCH_PASSWORD: "bench-password" }, "user", "create", "--email", "bench@example.com", "--name", "Bench");
    const key = cli(env, "key", "create", "--email", "bench@example.com", "--name", "bench");
    const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? "").split(/\s+/).filter(Boolean);
    child = spawn(process.execPath, [...nodeArgs, BIN, "start", "--role", ROLES], { cwd: ROOT, env, stdio: ["ignore", process.env.BENCH_SERVER_STDOUT ? "inherit" : "ignore", "inherit"] });
    for (let i = 0; ; i++) {
      if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break;
      if (i > 600 || child.exitCode !== null) throw new Error("server did not start");
      await new Promise((r) => setTimeout(r, 100));
    }
    console.log(`Runwatch ingest bench: embedded default, ${os.cpus().length} cores, node ${process.version}, ${DURATION}s per phase`);
    console.log(`roles: ${ROLES}; single: ${CONNECTIONS} connections; batch: ${BATCH_SIZE} events/request, ${BATCH_CONNECTIONS} connections\n`);
    // Warm-up of both paths (JIT, caches, the decode threads), so that no phase measures a cold start.
    let accepted = (await drive(url, key, { batch: false, connections: CONNECTIONS, duration: 3 })).accepted;
    accepted += (await drive(url, key, { batch: true, connections: 2, duration: 3 })).accepted;
    // The pipeline must keep up (the stored counts reach every acknowledged event) before the next phase starts.
    const withPipeline = ROLES.split(",").some((r) => r === "pipeline" || r === "all");
    const report = async (p: Phase, label: string) => {
      accepted += p.accepted;
      console.log(fmt(p, label) + (withPipeline ? `   (${await drained(url, key, accepted)})` : ""));
    };
    if (withPipeline) await drained(url, key, accepted);

    // Per kind: saturation, then paced at half of what it measured, then paced at half the target (in req/s).
    const kinds = [
      { kind: "single", batch: false, connections: CONNECTIONS, halfTargetRate: TARGET_SINGLE_REQ_S / 2 },
      { kind: "batch", batch: true, connections: BATCH_CONNECTIONS, halfTargetRate: TARGET_BATCH_EVENTS_S / 2 / BATCH_SIZE },
    ];
    for (const k of kinds) {
      if (runs(`${k.kind}-max`)) {
        const max = await drive(url, key, { batch: k.batch, connections: k.connections, duration: DURATION });
        await report(max, `${k.kind}, max load`);
        if (runs(`${k.kind}-half`)) {
          await report(await paced(url, key, { batch: k.batch, duration: DURATION, rate: Math.max(1, Math.round(max.reqPerSec / 2)) }), `${k.kind}, half load`);
        }
      }
      if (runs(`${k.kind}-target`)) {
        await report(await paced(url, key, { batch: k.batch, duration: DURATION, rate: k.halfTargetRate }), `${k.kind}, half the target`);
      }
    }

    console.log(`\ntargets: single ≥ ${TARGET_SINGLE_REQ_S} req/s, batch ≥ ${TARGET_BATCH_EVENTS_S} events/s, p99 < 25 ms at half load`);
  } finally {
    if (child && child.exitCode === null) {
      child.kill("SIGTERM");
      await new Promise((r) => child!.once("exit", r));
    }
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await main();

/**
 * What alert evaluation costs: the same workloads with no rules and with 7 enabled rules per user (one of each
 * trigger type, dashboard channel), on the embedded adapters in temp dirs.
 *
 *   1. pipeline: drain a backlog of EVENTS events (4 users, RUNS runs: run_start, steps, tool calls, 1 in 50
 *      runs failing, run_end with a cost), in-process like test/bench/pipeline.ts;
 *   2. ingest: `runwatch start --role web,pipeline` as a child (like test/bench/ingest.ts), rules created through
 *      the /alerts form, autocannon on POST /api/ingest (single) and /api/ingest/batch at max load; the pipeline
 *      consumes (and evaluates) while we ingest.
 *
 * Run: node --import tsx test/bench/alerts.ts   (env: BENCH_EVENTS=100000, BENCH_RUNS=2000, BENCH_DURATION=10,
 *      BENCH_SKIP_INGEST=1 to run only the pipeline part)
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { loadConfig } from "../../core/config.js";
import type { EventType, LoggedEvent } from "../../core/events/schema.js";
import { runIdFor, uuidv7 } from "../../core/ids.js";
import { createLogger } from "../../core/logger.js";
import { openPorts } from "../../core/runtime.js";
import { startPipeline } from "../../pipeline/runner.js";
import { createRule } from "../../alerts/index.js";
import { CookieJar, csrfFrom } from "../e2e/harness.js";
import { appendEvents } from "../../core/log/events.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const BIN = path.join(ROOT, "deploy/bin/runwatch.mjs");
const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 2_000);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const USERS = 4;

/** One enabled rule of each trigger type, dashboard channel. */
const RULES = [
  { trigger_type: "run_error", config: {} },
  { trigger_type: "waiting_for_input", config: {} },
  { trigger_type: "run_cost_above", config: { threshold_usd: 0.05 } },
  { trigger_type: "agent_budget_exceeded", config: { period: "day" } },
  { trigger_type: "run_duration_above", config: { seconds: 600 } },
  { trigger_type: "error_rate_above", config: { threshold_pct: 10, min_runs: 20 } },
  { trigger_type: "tool_error", config: {} },
];

function makeEvents(userIds: number[], total: number, runs: number, tag: string): LoggedEvent[] {
  const perRun = Math.max(4, Math.floor(total / runs));
  const out: LoggedEvent[] = [];
  for (let r = 0; r < runs && out.length < total; r++) {
    const userId = userIds[r % userIds.length]!;
    const sdk = `${tag}-${r}`;
    const fails = r % 50 === 49;
    const push = (type: EventType, payload: Record<string, unknown>, agent: string | null = null) => {
      const now = new Date().toISOString();
      out.push({ event_id: uuidv7(), project_id: userId, user_id: userId, run_id: runIdFor(userId, sdk), sdk_run_id: sdk, event_type: type, agent_name: agent, payload, occurred_at: now, received_at: now, config_version: null });
    };
    push("run_start", { framework: "langgraph", input: { q: "refund policy?" } }, `agent-${r % 5}`);
    for (let i = 0; i < perRun - 2; i++) {
      if (i % 2) push("step", { node_name: `node_${i % 7}`, phase: "end", duration_ms: 12 });
      else push("tool_call", { tool_name: "search_docs", phase: "end", input_preview: "q".repeat(120), output_preview: "r".repeat(400), duration_ms: 40 });
    }
    if (fails) push("error", { error_type: "TimeoutError", error_message: "upstream timed out" });
    else push("run_end", { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500, cost_usd: (r % 10) / 100, model: "gpt-4o" });
  }
  return out;
}

async function pipelineDrain(withRules: boolean): Promise<{ eps: number; secs: number; cpu: number; jobs: number }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-bench-alerts-"));
  try {
    const ports = await openPorts(loadConfig({ ...process.env, RUNWATCH_DATA_DIR: dir, LOG_LEVEL: "error" }));
    const users: number[] = [];
    for (let u = 0; u < USERS; u++) {
      const [row] = await ports.sql.query<{ id: string }>("WITH u AS (INSERT INTO users (name, email, password_hash) VALUES ('Bench', $1, 'x') RETURNING id), p AS (INSERT INTO projects (id, slug, name, personal_of) SELECT id, 'p-' || id, 'P', id FROM u) SELECT id FROM u", [`bench${u}@example.com`]);
      users.push(Number(row!.id));
      if (withRules) {
        for (const r of RULES) await createRule(ports.sql, users[u]!, { name: r.trigger_type, trigger_type: r.trigger_type, channel: "dashboard", target: "", config: r.config, enabled: true });
        await ports.sql.query("INSERT INTO agents (project_id, name, budget_usd) SELECT $1, 'agent-' || g, 1 FROM generate_series(0, 4) g", [users[u]]);
      }
    }
    const events = makeEvents(users, EVENTS, RUNS, "b");
    for (let i = 0; i < events.length; i += 1000) await appendEvents(ports.log, events.slice(i, i + 1000));
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const pipeline = await startPipeline(ports, { logger: createLogger("error") });
    while ((await pipeline.lag()) > 0) await new Promise((r) => setTimeout(r, 10));
    const secs = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    const cpu = (c.user + c.system) / 1e6;
    await pipeline.stop();
    const [jobs] = await ports.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM notification_jobs");
    await ports.close();
    return { eps: events.length / secs, secs, cpu, jobs: Number(jobs!.n) };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });

async function ingestRun(withRules: boolean): Promise<{ single: number; batch: number; singleP99: number; batchP99: number }> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-bench-alerts-ingest-"));
  const webPort = await freePort();
  const env = {
    ...process.env, NODE_ENV: "production", SESSION_SECRET: "bench-".padEnd(64, "x"), AGENT_SECRET: process.env.AGENT_SECRET ?? "bench-agents-".padEnd(64, "x"), LOG_LEVEL: "warn", RUNWATCH_DATA_DIR: dataDir,
    RUNWATCH_HOST: "127.0.0.1", RUNWATCH_WEB_PORT: String(webPort), RUNWATCH_GATEWAY_PORT: String(await freePort()),
    RUNWATCH_AGENTS_PORT: String(await freePort()), RUNWATCH_OTLP_GRPC_PORT: "off", RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000000", RUNWATCH_EVENT_QUOTA_PER_MINUTE: "0", RUNWATCH_PASSWORD: "bench-password",
  };
  const cli = (...args: string[]) => {
    const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, env, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`runwatch ${args.join(" ")}: ${r.stderr}`);
    return r.stdout.trim();
  };
  const url = `http://127.0.0.1:${webPort}`;
  let child: ChildProcess | undefined;
  try {
    cli("user", "create", "--email", "bench@example.com", "--name", "Bench");
    const key = cli("key", "create", "--email", "bench@example.com", "--name", "bench");
    child = spawn(process.execPath, [BIN, "start", "--role", "web,pipeline"], { cwd: ROOT, env, stdio: ["ignore", "ignore", "inherit"] });
    for (let i = 0; !(await fetch(`${url}/healthz`).then((r) => r.ok, () => false)); i++) {
      if (i > 600 || child.exitCode !== null) throw new Error("server did not start");
      await new Promise((r) => setTimeout(r, 100));
    }
    if (withRules) {
      const jar = new CookieJar();
      await jar.form(`${url}/login`, { _csrf: csrfFrom(await (await jar.fetch(`${url}/login`)).text()), email: "bench@example.com", password: "bench-password" });
      for (const r of RULES) {
        const csrf = csrfFrom(await (await jar.fetch(`${url}/alerts/new`)).text());
        const fields: Record<string, string> = { _csrf: csrf, name: r.trigger_type, trigger_type: r.trigger_type, channel: "dashboard", enabled: "on" };
        for (const [k, v] of Object.entries(r.config)) fields[`config.${k}`] = String(v);
        const res = await jar.form(`${url}/alerts`, fields);
        if (res.status !== 302) throw new Error(`rule ${r.trigger_type} not created: ${res.status}`);
      }
    }
    let conn = 0;
    const body = (run: number, i: number) => ({ event_type: "tool_call", sdk_run_id: `bench-run-${run}`, payload: { tool_name: "web_search", phase: "end", input_preview: "latest langgraph release notes", output_preview: `result ${i}`, duration_ms: 123 } });
    const drive = async (batch: boolean) => {
      const r = await autocannon({
        url: `${url}${batch ? "/api/ingest/batch" : "/api/ingest"}`, method: "POST", connections: batch ? 16 : 128, duration: DURATION,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        setupClient(client: { setBody(b: string): void }) {
          const run = conn++ % 64;
          client.setBody(JSON.stringify(batch ? { events: Array.from({ length: 500 }, (_, i) => body(run, i)) } : body(run, 0)));
        },
      } as autocannon.Options);
      return { rate: (r["2xx"] * (batch ? 500 : 1)) / r.duration, p99: r.latency.p99 };
    };
    await drive(false); // warm-up
    const single = await drive(false);
    const batch = await drive(true);
    return { single: single.rate, batch: batch.rate, singleP99: single.p99, batchP99: batch.p99 };
  } finally {
    if (child && child.exitCode === null) {
      child.kill("SIGTERM");
      await new Promise((r) => child!.once("exit", r));
    }
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

const pct = (a: number, b: number) => `${(((b - a) / a) * 100).toFixed(1)}%`;

console.log(`Runwatch alerts bench: ${os.cpus().length} cores, node ${process.version}; ${RULES.length} enabled rules per user in the "with rules" runs\n`);
// Alternate the order (no rules, rules, rules, no rules) so warm disk caches and JIT favour neither side.
const p0 = await pipelineDrain(false);
const p1 = await pipelineDrain(true);
const p2 = await pipelineDrain(true);
const p3 = await pipelineDrain(false);
const without = (p0.eps + p3.eps) / 2, withR = (p1.eps + p2.eps) / 2;
console.log(`pipeline backlog, ${EVENTS.toLocaleString()} events / ${RUNS.toLocaleString()} runs / ${USERS} users:`);
console.log(`  no rules:   ${Math.round(p0.eps).toLocaleString()} and ${Math.round(p3.eps).toLocaleString()} events/s`);
console.log(`  with rules: ${Math.round(p1.eps).toLocaleString()} and ${Math.round(p2.eps).toLocaleString()} events/s (${p1.jobs} notification jobs queued)`);
console.log(`  change in throughput: ${pct(without, withR)}`);
// CPU seconds of this process (pipeline + chDB threads) per run: less sensitive to other load on the machine.
const cpuWithout = (p0.cpu + p3.cpu) / 2, cpuWith = (p1.cpu + p2.cpu) / 2;
console.log(`  CPU per drain: no rules ${cpuWithout.toFixed(2)} s, with rules ${cpuWith.toFixed(2)} s: ${pct(cpuWithout, cpuWith)}\n`);

if (!process.env.BENCH_SKIP_INGEST) {
  const i0 = await ingestRun(false);
  const i1 = await ingestRun(true);
  console.log(`ingest (web,pipeline child, ${DURATION}s per phase):`);
  console.log(`  single, max load: no rules ${Math.round(i0.single).toLocaleString()} req/s (p99 ${i0.singleP99} ms); with rules ${Math.round(i1.single).toLocaleString()} req/s (p99 ${i1.singleP99} ms): ${pct(i0.single, i1.single)}`);
  console.log(`  batch, max load:  no rules ${Math.round(i0.batch).toLocaleString()} events/s (p99 ${i0.batchP99} ms); with rules ${Math.round(i1.batch).toLocaleString()} events/s (p99 ${i1.batchP99} ms): ${pct(i0.batch, i1.batch)}`);
}

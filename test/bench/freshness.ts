/**
 * Freshness: time from the ingest acknowledgement (HTTP 202 received by the client) to the WebSocket frame
 * carrying that event arriving at a subscribed dashboard client, at a steady 2,000 events/s.
 *
 *   node --import tsx test/bench/freshness.ts [--rate 2000] [--seconds 10] [--warmup 2]
 *
 * The server is the real thing, `runwatch start` as a child process (web + pipeline + gateway, embedded
 * default) on free ports over a temporary data dir. The load generator and the WebSocket client run in this
 * process. Each event carries a client event_id, so frames are matched to acks exactly. Target: p99 < 150 ms.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { randomUUID } from "node:crypto";
import http from "node:http";
import WebSocket from "ws";
import { CookieJar, csrfFrom, freePort } from "../e2e/harness.js";

const { values } = parseArgs({
  options: { rate: { type: "string", default: "2000" }, seconds: { type: "string", default: "10" }, warmup: { type: "string", default: "2" } },
});
const RATE = Number(values.rate);
const SECONDS = Number(values.seconds);
const WARMUP = Number(values.warmup);

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const cli = path.join(root, "deploy/bin/runwatch.mjs");

async function main() {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-freshness-"));
  const [webPort, gatewayPort, agentsPort] = [await freePort(), await freePort(), await freePort()];
  const env = {
    ...process.env,
    RUNWATCH_DATA_DIR: dataDir, RUNWATCH_HOST: "127.0.0.1", LOG_LEVEL: "warn",
    RUNWATCH_WEB_PORT: String(webPort), RUNWATCH_GATEWAY_PORT: String(gatewayPort), RUNWATCH_AGENTS_PORT: String(agentsPort), RUNWATCH_OTLP_GRPC_PORT: "off",
    RUNWATCH_PUBLIC_GATEWAY_URL: `ws://127.0.0.1:${gatewayPort}`,
    RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000000",
  };
  const base = `http://127.0.0.1:${webPort}`;
  const server = spawn(process.execPath, [cli, "start", "--role", "web,pipeline,gateway"], { env, stdio: ["ignore", "pipe", "inherit"] });
  try {
    await waitFor(server, /Runwatch is running/, 120_000);
    const email = "bench@example.com", password = "bench password 123";
    await runCli({ ...env, RUNWATCH_PASSWORD: password }, ["user", "create", "--email", email, "--name", "Bench"]);
    const key = /[0-9a-f]{64}/.exec(await runCli(env, ["key", "create", "--email", email, "--name", "bench"]))![0];

    // A dashboard session: log in like a browser, get a realtime token, subscribe.
    const jar = new CookieJar();
    const loginPage = await jar.fetch(`${base}/login`);
    const csrf = csrfFrom(await loginPage.text());
    const login = await jar.form(`${base}/login`, { _csrf: csrf, email, password, next: "/dashboard" });
    if (login.status !== 302 && login.status !== 303) throw new Error(`login failed: ${login.status}`);
    const info = (await (await jar.fetch(`${base}/api/realtime/token`)).json()) as { url: string; token: string; channel: string; protocols: string[] };

    const acked = new Map<string, number>();
    const arrived = new Map<string, number>();
    const ws = new WebSocket(info.url, info.protocols);
    await new Promise<void>((resolve, reject) => {
      ws.on("error", reject);
      ws.on("message", (data) => {
        const now = performance.now();
        const msg = JSON.parse(data.toString());
        if (msg.type === "hello") ws.send(JSON.stringify({ type: "subscribe", channel: info.channel }));
        else if (msg.type === "subscribed") resolve();
        else if (msg.type === "event") arrived.set(msg.event.event_id, now);
      });
    });

    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    const post = (payload: string) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(`${base}/api/ingest`, {
          method: "POST", agent,
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
        }, (res) => { res.resume(); res.on("end", () => resolve(res.statusCode ?? 0)); });
        req.on("error", reject);
        req.end(payload);
      });
    const body = (sdkRunId: string, i: number, eventId: string) =>
      JSON.stringify(i === 0
        ? { event_type: "run_start", sdk_run_id: sdkRunId, agent_name: "bench-agent", event_id: eventId, payload: { framework: "bench" } }
        : { event_type: "tool_call", sdk_run_id: sdkRunId, event_id: eventId, payload: { tool_name: "search", phase: i % 2 ? "start" : "end", input_preview: "x".repeat(200), duration_ms: 5 } });
    let failed = 0;
    const send = async (sdkRunId: string, i: number, measure: boolean) => {
      const id = randomUUID();
      try {
        const status = await post(body(sdkRunId, i, id));
        if (status !== 202) { failed++; return; }
        if (measure) acked.set(id, performance.now());
      } catch {
        failed++;
      }
    };

    // Open-loop load: every tick, send however many events keep the rate on schedule. 50 runs in parallel.
    const RUNS = 50;
    const perRun = new Array(RUNS).fill(0);
    const inflight = new Set<Promise<void>>();
    const total = RATE * (WARMUP + SECONDS);
    const start = performance.now();
    let sent = 0;
    while (sent < total) {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * RATE));
      while (sent < due) {
        const r = sent % RUNS;
        const p = send(`fresh-${r}`, perRun[r]++, sent >= RATE * WARMUP);
        inflight.add(p);
        p.finally(() => inflight.delete(p));
        sent++;
      }
      await new Promise((res) => setTimeout(res, 2));
    }
    const elapsed = (performance.now() - start) / 1000;
    await Promise.all(inflight);
    // Let the last frames arrive.
    const deadline = performance.now() + 5000;
    while (performance.now() < deadline && [...acked.keys()].some((id) => !arrived.has(id))) await new Promise((r) => setTimeout(r, 50));

    const lat: number[] = [];
    let early = 0, missing = 0;
    for (const [id, t] of acked) {
      const f = arrived.get(id);
      if (f === undefined) { missing++; continue; }
      // The frame can beat the 202 to the client (the pipeline picks the event up as soon as it is durable).
      if (f < t) early++;
      lat.push(Math.max(0, f - t));
    }
    lat.sort((x, y) => x - y);
    const pct = (p: number) => lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))] ?? NaN;
    const fmt = (n: number) => `${n.toFixed(1)} ms`;
    console.log(`freshness: ingest 202 → WebSocket frame, ${RATE} events/s offered for ${SECONDS}s (+${WARMUP}s warm-up)`);
    console.log(`  achieved send rate   ${(sent / elapsed).toFixed(0)} events/s`);
    console.log(`  measured events      ${acked.size} acked, ${lat.length} frames matched, ${missing} missing, ${failed} failed requests`);
    console.log(`  frame before ack     ${early}`);
    console.log(`  p50 ${fmt(pct(50))}   p90 ${fmt(pct(90))}   p99 ${fmt(pct(99))}   max ${fmt(lat[lat.length - 1] ?? NaN)}`);
    console.log(`  target p99 < 150 ms: ${pct(99) < 150 ? "met" : "NOT met"}`);
    ws.close();
    agent.destroy();
  } finally {
    server.kill("SIGTERM");
    await new Promise((r) => server.once("exit", r));
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

function waitFor(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let buf = "";
    const t = setTimeout(() => reject(new Error(`server did not start: ${buf}`)), timeoutMs);
    child.stdout!.on("data", (d) => {
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

await main();

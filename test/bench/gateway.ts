/**
 * The gateway's two WebSocket engines (gateway/engines) side by side, in the same run: 1,000 subscribed sockets
 * (100 users × 10 tabs), messages published on the users' channels at steady rates and then as fast as the gateway
 * takes them. Prints, per engine and phase, the frames delivered a second, the delivery latency from publish to the
 * client's receipt (p50/p99), the gateway's CPU (% of one core) and its RSS.
 *
 *   node --import tsx test/bench/gateway.ts [--sockets 1000] [--users 100] [--rates 200,2000] [--seconds 5]
 *                                           [--bytes 1024] [--engines uws,ws]
 *
 * The gateway runs in a child process (test/bench/gateway-server.ts) so that CPU and RSS are its own; the clients
 * are `ws` sockets in this process. Both share the machine's cores, so the unpaced phase measures the pair; compare
 * the engines by their ratio within one run. `uws` runs only where its native build loads for this Node.js.
 */
import { fork, type ChildProcess } from "node:child_process";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { REALTIME_SUBPROTOCOL, signRealtimeToken, TOKEN_PROTOCOL_PREFIX } from "../../core/tokens.js";
import { loadNativeUws } from "../../gateway/engines/uws-native.js";
import type { PublishCommand, PublishDone } from "./gateway-server.js";

const { values } = parseArgs({
  options: {
    sockets: { type: "string", default: "1000" }, users: { type: "string", default: "100" }, rates: { type: "string", default: "200,2000" },
    seconds: { type: "string", default: "5" }, bytes: { type: "string", default: "1024" }, engines: { type: "string" },
  },
});
const SOCKETS = Number(values.sockets);
const USERS = Number(values.users);
const RATES = values.rates!.split(",").map(Number);
const SECONDS = Number(values.seconds);
const BYTES = Number(values.bytes);
const SECRET = "gateway-bench-secret-0123456789";
const native = loadNativeUws();
const ENGINES = values.engines?.split(",") ?? (native.ok ? ["uws", "ws"] : ["ws"]);

const now = () => performance.timeOrigin + performance.now();
const pct = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN);

function request<T>(child: ChildProcess, msg: object, pick: (m: any) => boolean): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: any) => { if (pick(m)) { child.off("message", on); resolve(m); } };
    child.on("message", on);
    child.send(msg);
  });
}

interface Clients { sockets: WebSocket[]; latencies: number[]; received: number; lastAt: number; closed: number }

async function connectAll(url: string): Promise<Clients> {
  const c: Clients = { sockets: [], latencies: [], received: 0, lastAt: 0, closed: 0 };
  const one = (i: number) => new Promise<void>((resolve, reject) => {
    const uid = 1 + (i % USERS);
    const tok = signRealtimeToken(SECRET, uid, `bench-session-${i}-0123456789`).token;
    const ws = new WebSocket(`${url}/ws`, [REALTIME_SUBPROTOCOL, `${TOKEN_PROTOCOL_PREFIX}${tok}`]);
    ws.on("error", reject);
    ws.on("close", () => { c.closed++; });
    ws.on("message", (data) => {
      const text = data.toString();
      if (text.startsWith('{"type":"bench"')) {
        const at = now();
        const from = text.indexOf('"t":') + 4;
        c.latencies.push(at - Number(text.slice(from, text.indexOf(",", from))));
        c.received++;
        c.lastAt = at;
      } else if (text.startsWith('{"type":"hello"')) {
        ws.send(JSON.stringify({ type: "subscribe", channel: `user.${uid}` }));
      } else if (text.startsWith('{"type":"subscribed"')) {
        resolve();
      } else {
        reject(new Error(`socket ${i}: ${text}`));
      }
    });
    c.sockets.push(ws);
  });
  for (let i = 0; i < SOCKETS; i += 100) await Promise.all(Array.from({ length: Math.min(100, SOCKETS - i) }, (_, j) => one(i + j)));
  return c;
}

async function phase(child: ChildProcess, clients: Clients, rate: number) {
  clients.latencies = [];
  clients.received = 0;
  const started = now();
  const cmd: PublishCommand = { cmd: "publish", rate, seconds: SECONDS, channels: USERS, bytes: BYTES };
  const done = await request<PublishDone>(child, cmd, (m) => m.done);
  const expected = done.published * (SOCKETS / USERS);
  // Let the last frames arrive (at most 10 s more).
  for (let waited = 0; clients.received < expected && waited < 10_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
  const sorted = clients.latencies.sort((a, b) => a - b);
  return {
    offered: rate ? `${rate} msg/s` : "unpaced",
    frames_per_s: Math.round(clients.received / ((clients.lastAt - started) / 1000)),
    delivered: `${clients.received}/${expected}`,
    p50_ms: +pct(sorted, 50).toFixed(1),
    p99_ms: +pct(sorted, 99).toFixed(1),
    gateway_cpu_pct: Math.round((done.cpuMs / done.wallMs) * 100),
    gateway_rss_mib: Math.round(done.rssMiB),
    dropped_sockets: clients.closed,
  };
}

async function bench(engine: string) {
  const child = fork(new URL("./gateway-server.ts", import.meta.url).pathname, ["--engine", engine, "--secret", SECRET], {
    execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const ready = await new Promise<{ url: string; engine: string; rssMiB: number }>((resolve) => child.once("message", resolve as never));
  const clients = await connectAll(ready.url);
  const idle = await request<{ rssMiB: number }>(child, { cmd: "rss" }, (m) => "rssMiB" in m);
  console.log(`\n${engine}: RSS ${Math.round(ready.rssMiB)} MiB at start, ${Math.round(idle.rssMiB)} MiB with ${SOCKETS} sockets subscribed (+${Math.round(idle.rssMiB - ready.rssMiB)} MiB)`);
  const rows = [];
  for (const rate of [...RATES, 0]) rows.push(await phase(child, clients, rate));
  console.table(rows);
  for (const ws of clients.sockets) ws.terminate();
  child.send({ cmd: "stop" });
  await new Promise((r) => child.once("exit", r));
  return { engine, idleRss: idle.rssMiB, rows };
}

console.log(`gateway bench: Node ${process.version}, ${SOCKETS} sockets over ${USERS} users, ${BYTES}-byte messages, ${SECONDS} s a phase`);
if (!native.ok) console.log(`(uws skipped: ${native.why})`);
const results = [];
for (const engine of ENGINES) results.push(await bench(engine));
if (results.length === 2) {
  const [a, b] = results;
  console.log(`\n${b.engine}/${a.engine} ratios, phase by phase:`);
  a.rows.forEach((row, i) => {
    const other = b.rows[i];
    console.log(`  ${row.offered.padEnd(12)} frames/s ×${(other.frames_per_s / row.frames_per_s).toFixed(2)}  p99 ×${(other.p99_ms / row.p99_ms).toFixed(2)}  CPU ×${(other.gateway_cpu_pct / row.gateway_cpu_pct).toFixed(2)}  RSS ×${(other.gateway_rss_mib / row.gateway_rss_mib).toFixed(2)}`);
  });
}

/**
 * The gateway side of test/bench/gateway.ts, in a process of its own so that its CPU time and RSS are the
 * gateway's alone: the real gateway (gateway/server.ts) on the engine named by --engine, over the in-process
 * pub/sub, publishing on command (IPC) the way the pipeline's broadcast does.
 *
 *   node --import tsx test/bench/gateway-server.ts --engine uws|ws --secret S   (started by gateway.ts)
 */
import { parseArgs } from "node:util";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../../core/config.js";
import { openPorts } from "../../core/runtime.js";
import { startGateway } from "../../gateway/server.js";
import { loadEngine } from "../../gateway/engines/choose.js";
import { createLogger } from "../../core/logger.js";

export interface PublishCommand {
  cmd: "publish";
  /** Messages a second over all channels; 0 = as fast as the loop can. */
  rate: number;
  seconds: number;
  channels: number;
  bytes: number;
}
export interface PublishDone { done: true; published: number; cpuMs: number; wallMs: number; rssMiB: number }

const { values } = parseArgs({ options: { engine: { type: "string" }, secret: { type: "string" } } });
const engineName = values.engine as "uws" | "ws";

const dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-gw-bench-"));
const config = loadConfig({ RUNWATCH_DATA_DIR: dir, RUNWATCH_GATEWAY_PORT: "0", LOG_LEVEL: "error" });
const ports = await openPorts(config, ["pubsub"]);
const engine = await loadEngine(engineName, createLogger("error"));
const gw = await startGateway(ports, config, { sessionSecret: values.secret!, engine });

const pad = (n: number) => "x".repeat(Math.max(0, n));
const now = () => performance.timeOrigin + performance.now();

async function publish(c: PublishCommand): Promise<PublishDone> {
  const body = pad(c.bytes - 60);
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const end = start + c.seconds * 1000;
  let published = 0;
  // Publishes in ticks of 10 ms, each sending what the rate owes by then (or 200 messages when unpaced).
  while (performance.now() < end) {
    const owed = c.rate > 0 ? Math.floor(((performance.now() - start) / 1000) * c.rate) - published : 200;
    for (let i = 0; i < owed; i++, published++) {
      await ports.pubsub.publish(`user.${1 + (published % c.channels)}`, `{"type":"bench","t":${now()},"pad":"${body}"}`);
    }
    await new Promise((r) => (c.rate > 0 ? setTimeout(r, 10) : setImmediate(r)));
  }
  const cpu = process.cpuUsage(cpu0);
  return { done: true, published, cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - start, rssMiB: process.memoryUsage.rss() / 2 ** 20 };
}

process.on("message", (m: PublishCommand | { cmd: "rss" } | { cmd: "stop" }) => {
  if (m.cmd === "publish") void publish(m).then((r) => process.send!(r));
  else if (m.cmd === "rss") process.send!({ rssMiB: process.memoryUsage.rss() / 2 ** 20 });
  else void gw.close().then(() => ports.close()).then(() => fs.rm(dir, { recursive: true, force: true })).then(() => process.exit(0));
});
process.send!({ ready: true, url: gw.url, engine: gw.engine, rssMiB: process.memoryUsage.rss() / 2 ** 20 });

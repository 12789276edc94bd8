/**
 * How a CLI command reaches an embedded data dir's stores: through the running server's admin socket when a server
 * holds the data dir (waiting while it opens its stores), or directly, holding the data dir's lock, when none does
 * (data-dir-lock.ts). With DATABASE_URL the stores are servers and are opened directly.
 */
import type { Config } from "../core/config.js";
import { openPorts, type PortName, type Ports } from "../core/runtime.js";
import { adminSocketPath, callAdmin, runAdmin, type AdminRequest, type AdminResult } from "./admin.js";
import { DataDirBusy, lockDataDir, lockHolder } from "./data-dir-lock.js";

/** Runs an admin command on the running server of this data dir, or directly on the database when none runs. */
export async function admin(config: Config, req: AdminRequest): Promise<AdminResult> {
  // Retention may delete for a while; other commands answer at once.
  const viaServer = await reachServer(config, req, req.cmd === "retention.apply" ? 3_600_000 : undefined);
  if (viaServer) return viaServer;
  const needs = portsFor(req);
  return withLocalPorts(config, needs, (ports) => runAdmin({
    sql: ports.sql,
    log: needs.includes("log") ? ports.log : undefined,
    ch: needs.includes("clickhouse") ? ports.clickhouse : undefined,
    pubsub: needs.includes("pubsub") ? ports.pubsub : undefined,
  }, req));
}

/** The ports a command opens when it runs here rather than in the server (runAdmin says why each needs them). */
function portsFor(req: AdminRequest): PortName[] {
  switch (req.cmd) {
    case "dead-letters.replay": return ["sql", "log"];
    case "retention.apply": return ["sql", "clickhouse"];
    // A label move may go through the gate on production, which reads experiments' scores.
    case "prompt.label": return ["sql", "clickhouse"];
    // Embedded, no gateway or web process runs without the server, so this reaches none; with REDIS_URL it reaches
    // them all.
    case "project.add-member":
    case "project.remove-member": return ["sql", "pubsub"];
    default: return ["sql"];
  }
}

/** How long a command waits for a starting server's admin socket: a first start on a busy machine migrates for a while. */
const SERVER_START_WAIT_MS = 120_000;

/**
 * The running server's answer on its admin socket; undefined when no server holds this embedded data dir (or the
 * stores are servers: DATABASE_URL). A server that holds the data dir but has not opened its socket yet (it is
 * opening its stores) is waited for, up to 2 minutes, saying so on stderr after a few seconds.
 */
export async function reachServer(config: Config, req: AdminRequest, timeoutMs?: number): Promise<AdminResult | undefined> {
  if (config.databaseUrl) return undefined;
  const socket = adminSocketPath(config.dataDir);
  const started = Date.now();
  let told = false;
  for (;;) {
    const answer = await callAdmin(socket, req, timeoutMs);
    if (answer) return answer;
    const holder = await lockHolder(config.dataDir);
    if (holder?.role !== "server") return undefined;
    if (Date.now() - started > SERVER_START_WAIT_MS) throw new DataDirBusy(holder, config.dataDir);
    if (!told && Date.now() - started > 5_000) {
      process.stderr.write(`runwatch: waiting for the server (pid ${holder.pid}) to finish starting…\n`);
      told = true;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Opens the stores here for `fn`, holding the embedded data dir's lock meanwhile (data-dir-lock.ts). */
export async function withLocalPorts<T>(config: Config, needs: PortName[] | undefined, fn: (ports: Ports) => Promise<T>): Promise<T> {
  const lock = config.databaseUrl ? undefined : await lockDataDir(config.dataDir, "cli", 30_000);
  try {
    const ports = await openPorts(config, needs);
    try {
      return await fn(ports);
    } finally {
      await ports.close();
    }
  } finally {
    lock?.release();
  }
}

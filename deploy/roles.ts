/**
 * The services `runwatch start` can run, which ports each needs, and how each starts. The embedded default runs
 * every role in one process sharing one openPorts (the file log and PGlite are single-process); in scale mode
 * (KAFKA_BROKERS, CLICKHOUSE_URL, DATABASE_URL, REDIS_URL) each role can run as many processes as needed.
 *
 * gateway and agents are imported lazily: a build without them still starts the rest, and says so.
 */
import type { Config } from "../core/config.js";
import type { Logger } from "../core/logger.js";
import type { PortName, Ports } from "../core/runtime.js";

export type RoleName = "web" | "pipeline" | "gateway" | "agents";
export const ROLE_NAMES: readonly RoleName[] = ["pipeline", "web", "gateway", "agents"];

export interface RunningService {
  readonly role: RoleName;
  readonly url?: string;
  close(): Promise<void>;
}

export interface Role {
  readonly name: RoleName;
  readonly needs: readonly PortName[];
  /**
   * Starts the service, or resolves undefined when this build does not contain it. `together` lists every
   * role this process runs.
   */
  start(ports: Ports, config: Config, logger: Logger, together: readonly RoleName[]): Promise<RunningService | undefined>;
}

/** Whatever shape a service returns, the one way to stop it. */
function closer(svc: unknown): () => Promise<void> {
  const s = svc as { close?: () => Promise<void>; stop?: () => Promise<void> } | undefined;
  if (typeof s?.close === "function") return () => s.close!();
  if (typeof s?.stop === "function") return () => s.stop!();
  return async () => {};
}

const urlOf = (svc: unknown): string | undefined => {
  const u = (svc as { url?: unknown } | undefined)?.url;
  return typeof u === "string" ? u : undefined;
};

/** Imports a module of another component; undefined when the file does not exist in this build. */
async function optionalImport<T>(specifier: string, logger: Logger, what: string): Promise<T | undefined> {
  try {
    return (await import(specifier)) as T;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { url?: string };
    const missing = e.code === "ERR_MODULE_NOT_FOUND" && String(e.message).includes(specifier.replace(/^\.\.\//, "").replace(/\.js$/, ""));
    if (!missing) throw err;
    logger.warn(`${what} is not part of this build; not started`, { module: specifier });
    return undefined;
  }
}

export const ROLES: Record<RoleName, Role> = {
  web: {
    name: "web",
    needs: ["log", "clickhouse", "sql", "limiter", "pubsub"],
    async start(ports, config, logger) {
      const { startWeb } = await import("../web/server.js");
      const web = await startWeb(ports, { port: config.webPort, host: config.host, logger: logger.child({ svc: "web" }) });
      return { role: "web", url: web.url, close: () => web.close() };
    },
  },
  pipeline: {
    name: "pipeline",
    needs: ["log", "clickhouse", "sql", "pubsub", "limiter"],
    async start(ports, config, logger, together) {
      const mod = await optionalImport<{ startPipeline(p: Ports): Promise<unknown> }>("../pipeline/runner.js", logger, "the pipeline");
      if (!mod) return undefined;
      // Beside ingest, the pipeline gets a thread of its own so its batches do not hold up HTTP requests.
      const onThread = config.pipelineThread === "thread" || (config.pipelineThread === "auto" && together.includes("web"));
      const p = onThread
        ? await (await import("../pipeline/thread/host.js")).startPipelineThread(ports)
        : await mod.startPipeline(ports);
      // Beside each pipeline run the background jobs (deploy/jobs.ts): notification delivery, online evaluation,
      // the retention sweep. They stop after it, so what its last parts queued still goes out.
      const { startBackgroundJobs } = await import("./jobs.js");
      const jobs = await startBackgroundJobs(ports, config, logger).catch(async (err) => {
        await closer(p)();
        throw err;
      });
      return { role: "pipeline", close: async () => { await closer(p)(); await jobs.stop(); } };
    },
  },
  gateway: {
    name: "gateway",
    needs: ["pubsub"],
    async start(ports, config, logger) {
      const mod = await optionalImport<{ startGateway(p: Ports, c: Config): Promise<unknown> }>("../gateway/server.js", logger, "the realtime gateway");
      if (!mod) return undefined;
      const g = await mod.startGateway(ports, config);
      return { role: "gateway", url: urlOf(g), close: closer(g) };
    },
  },
  agents: {
    name: "agents",
    needs: [],
    async start(_ports, config, logger) {
      const mod = await optionalImport<{ startAgentsService(c: Config): Promise<unknown> }>("../agents-service/server.js", logger, "the agents service");
      if (!mod) return undefined;
      const a = await mod.startAgentsService(config);
      return { role: "agents", url: urlOf(a), close: closer(a) };
    },
  },
};

/** Parses `--role web,pipeline` / `--role all`. */
export function parseRoles(arg: string | undefined): RoleName[] {
  if (!arg || arg === "all") return [...ROLE_NAMES];
  const names = arg.split(",").map((s) => s.trim()).filter(Boolean);
  for (const n of names) {
    if (!ROLE_NAMES.includes(n as RoleName)) throw new Error(`unknown role ${JSON.stringify(n)}; expected one of ${ROLE_NAMES.join(", ")} or all`);
  }
  return ROLE_NAMES.filter((r) => names.includes(r));
}

export const portsFor = (roles: readonly RoleName[]): PortName[] => [...new Set(roles.flatMap((r) => ROLES[r].needs))];

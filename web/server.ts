/** Starts the web app on an HTTP server (default config.host:config.webPort; port 0 picks a free one). */
import { loadTriggers, type TriggerDefinition } from "../alerts/index.js";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Ports } from "../core/runtime.js";
import { createEventStore } from "../stores/runs/event-store.js";
import { HeavyReads } from "./heavy-reads.js";
import { createLogger, type Logger } from "../core/logger.js";
import { resolveSessionSecret } from "../core/secrets.js";
import { createWebApp, type WebApp } from "./app.js";
import { inThreadDecoder, threadDecoder } from "./ingest/decode-thread.js";
import { INLINE_BUDGET_MS_PER_SECOND, smallBodiesInline } from "./ingest/small-bodies-inline.js";
import { createAdmission, createEventQuota } from "./ingest/admission.js";
import { startOtlpGrpc } from "./otlp/grpc-server.js";
import { clientAddress } from "../core/network/client-address.js";
import type { WebDeps } from "./deps.js";
import { watchPipelineHealth } from "./health.js";
import { watchJobReports } from "./job-reports.js";
import { createThrottles } from "./middleware/throttles.js";
import { ACCESS_CHANGED_CHANNEL, parseAccessChange } from "../accounts/index.js";
import { answerClientError } from "../core/network/client-error.js";

export interface WebServer {
  readonly url: string;
  readonly port: number;
  /** The OTLP/gRPC port, null when it is off or could not listen. */
  readonly otlpGrpcPort: number | null;
  readonly app: WebApp;
  close(): Promise<void>;
}

export interface WebOptions {
  port?: number;
  host?: string;
  logger?: Logger;
  /** Custom alert triggers for the /alerts form, besides the built-ins and RUNWATCH_ALERT_TRIGGERS (give the pipeline the same). */
  triggers?: readonly TriggerDefinition[];
  /** OTLP/gRPC port instead of config.otlpGrpcPort (0: a free one; null: none). */
  otlpGrpcPort?: number | null;
}

export async function startWeb(ports: Ports, opts: WebOptions = {}): Promise<WebServer> {
  const config = ports.config;
  const logger = opts.logger ?? createLogger(config.logLevel).child({ svc: "web" });
  const sessionSecret = await resolveSessionSecret(config);
  // Batch and OTLP bodies decode on threads of their own, small ones on the request's thread while it has time to
  // spare (RUNWATCH_INGEST_INLINE_BYTES); RUNWATCH_INGEST_THREADS=0 decodes every body on the request's thread.
  const batchDecoder = config.ingestThreads > 0
    ? smallBodiesInline(threadDecoder({ ...config, threads: config.ingestThreads, logger }), config, { maxBytes: config.ingestInlineBytes, budgetMsPerSecond: INLINE_BUDGET_MS_PER_SECOND })
    : inThreadDecoder(config);
  const health = await watchPipelineHealth(ports.pubsub, ports.sql, logger);
  const jobs = await watchJobReports(ports.pubsub, logger);
  const deps: WebDeps = { ports, events: createEventStore(ports.clickhouse), heavyReads: new HeavyReads(), logger, sessionSecret, batchDecoder, health, jobs, throttles: createThrottles(ports.limiter, config), triggers: await loadTriggers(config, opts.triggers) };
  const app = createWebApp(deps);
  // What changes a key's access is announced by whichever process made the change (accounts/access-changes.ts).
  const unsubscribeAccess = await ports.pubsub.subscribePrefix(ACCESS_CHANGED_CHANNEL, (_channel, message) => {
    const change = parseAccessChange(message);
    if (change) app.apiKeys.forget(change);
  });
  const server = http.createServer({ keepAliveTimeout: 65_000, requestTimeout: 60_000 }, app.callback());
  server.on("clientError", answerClientError);
  const host = opts.host ?? config.host;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? config.webPort, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  logger.info("web listening", { url });
  const grpcPort = opts.otlpGrpcPort === undefined ? config.otlpGrpcPort : opts.otlpGrpcPort;
  const grpc = grpcPort === null ? undefined : await startOtlpGrpc({
    admission: createAdmission(deps, app.apiKeys),
    quota: createEventQuota(deps),
    clientAddress: (peer, forwardedFor) => clientAddress(peer, forwardedFor, config.trustedProxies),
    limits: config.otlpGrpcLimits,
    decoder: batchDecoder,
    log: ports.log,
    logger,
    maxBodyBytes: config.otlpMaxBodyBytes,
  }, host, grpcPort).catch((err: unknown) => {
    // OTLP/HTTP on the web port still works; a collector already on 4317 must not keep Runwatch from starting.
    logger.error("OTLP/gRPC cannot listen; set RUNWATCH_OTLP_GRPC_PORT to a free port (or off)", { port: grpcPort, err: String(err) });
    return undefined;
  });
  if (grpc) logger.info("OTLP/gRPC listening", { port: grpc.port });
  return {
    url,
    port,
    otlpGrpcPort: grpc?.port ?? null,
    app,
    close: () =>
      new Promise<void>((resolve) => {
        // Stop accepting, let in-flight requests finish (their 202s mean durable), then drop idle sockets.
        server.close(() => {
          void Promise.allSettled([grpc?.close()]).then(() => Promise.allSettled([batchDecoder.close(), health.close(), jobs.close(), unsubscribeAccess()])).then(() => resolve());
        });
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 5_000).unref();
      }),
  };
}

/**
 * OTLP/gRPC receiver: TraceService/Export, LogsService/Export and MetricsService/Export (opentelemetry.proto.collector.*.v1) on
 * RUNWATCH_OTLP_GRPC_PORT (default 4317), served by @grpc/grpc-js (which also handles grpc-encoding gzip and the
 * message size limit). The request stays bytes on this thread: it is decoded, mapped and validated on an ingest
 * decode thread (export-decode.ts), like an OTLP/HTTP body. Status codes as the OTLP specification says:
 * UNAUTHENTICATED (no or a bad `authorization: Bearer <key>`), INVALID_ARGUMENT (not an export; do not retry),
 * RESOURCE_EXHAUSTED with RetryInfo (rate limit), UNAVAILABLE with RetryInfo (the log cannot take events now).
 *
 * Limits before authentication (docs/SECURITY.md, capacity): the key is checked when a call's metadata arrives,
 * before its message is read (an interceptor; the stream stays paused meanwhile, so HTTP/2 flow control holds a
 * keyless sender to one window, not 16 MiB), and a refused call is ended at once: its status, then RST_STREAM
 * NO_ERROR (RFC 9113 §8.1), so the sender stops sending the rest of its message. Each connection may carry
 * `maxStreams` calls at a time; a connection without calls for `idleMs` — including one that never sent a request —
 * is closed by then (grpc-idle.ts), and keepalive pings find dead peers.
 */
import http2 from "node:http2";
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../../core/logger.js";
import type { EventLog } from "../../core/ports/event-log.js";
import { toHttpError } from "../http-errors.js";
import type { Admission, EventQuota } from "../ingest/admission.js";
import type { BatchDecoder } from "../ingest/decode-thread.js";
import { appendDurably } from "../ingest/durable-append.js";
import { encodeRpcStatus } from "../../otlp/otlp-protobuf.js";
import type { OtlpSignal } from "../../otlp/signal-decode.js";
import { closeIdleConnections } from "./grpc-idle.js";

export interface OtlpGrpcLimits {
  /** Concurrent calls on one connection (RUNWATCH_OTLP_GRPC_MAX_STREAMS). */
  readonly maxStreams: number;
  /** A connection without calls this long is closed (RUNWATCH_OTLP_GRPC_IDLE_MS). */
  readonly idleMs: number;
}

export interface OtlpGrpcDeps {
  readonly admission: Admission;
  /** The user's quota in events, charged an export's spans once it is decoded. */
  readonly quota: EventQuota;
  /** The client's address from the peer and an x-forwarded-for entry (RUNWATCH_TRUSTED_PROXIES). */
  readonly clientAddress: (peer: string, forwardedFor: string | undefined) => string;
  readonly limits: OtlpGrpcLimits;
  readonly decoder: BatchDecoder;
  readonly log: EventLog;
  readonly logger: Logger;
  readonly maxBodyBytes: number;
}

export interface OtlpGrpcServer {
  readonly port: number;
  close(): Promise<void>;
}

export const TRACE_EXPORT_PATH = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";
export const LOGS_EXPORT_PATH = "/opentelemetry.proto.collector.logs.v1.LogsService/Export";
export const METRICS_EXPORT_PATH = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export";

const bytes = (b: Buffer): Buffer => b;
/** A signal's service with the messages left as bytes (the decode threads decode them). */
const serviceAt = (path: string): grpc.ServiceDefinition => ({
  Export: {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: bytes,
    requestDeserialize: bytes,
    responseSerialize: bytes,
    responseDeserialize: bytes,
  },
});
const SERVICES: readonly (readonly [OtlpSignal, grpc.ServiceDefinition])[] = [
  ["traces", serviceAt(TRACE_EXPORT_PATH)],
  ["logs", serviceAt(LOGS_EXPORT_PATH)],
  ["metrics", serviceAt(METRICS_EXPORT_PATH)],
];

/** The gRPC status for an HTTP-style error (toHttpError), with RetryInfo when the client should retry later. */
function grpcError(err: unknown, logger: Logger): { code: grpc.status; details: string; metadata: grpc.Metadata } {
  const e = toHttpError(err);
  const retryAfter = e.headers["Retry-After"] !== undefined ? Number(e.headers["Retry-After"]) : undefined;
  const code =
    e.status === 401 ? grpc.status.UNAUTHENTICATED
    : e.status === 403 ? grpc.status.PERMISSION_DENIED
    : e.status === 429 || e.status === 413 ? grpc.status.RESOURCE_EXHAUSTED
    : e.status === 503 ? grpc.status.UNAVAILABLE
    : e.status < 500 ? grpc.status.INVALID_ARGUMENT
    : grpc.status.INTERNAL;
  if (code === grpc.status.INTERNAL) logger.error("OTLP/gRPC export failed", { err });
  const metadata = new grpc.Metadata();
  metadata.set("grpc-status-details-bin", Buffer.from(encodeRpcStatus(code, e.body.error.message, retryAfter)));
  return { code, details: e.body.error.message, metadata };
}

/** Set by the interceptor only (a client's own value is removed): the call key's project and user, "<project>:<user>". */
const AUTHENTICATED_USER = "runwatch-authenticated-sender";

/** Checks the call's key when its metadata arrives, before its message is read; a refusal ends the call there. */
function authenticateFirst(deps: OtlpGrpcDeps): grpc.ServerInterceptor {
  return (_method, call) =>
    new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, pass) => {
            metadata.remove(AUTHENTICATED_USER);
            const authorization = metadata.get("authorization")[0];
            const forwarded = metadata.get("x-forwarded-for").map(String).join(", ") || undefined;
            deps
              .admission(typeof authorization === "string" ? authorization : undefined, deps.clientAddress(peerIp(call.getPeer()), forwarded))
              .then(({ principal }) => {
                metadata.set(AUTHENTICATED_USER, `${principal.projectId}:${principal.userId}`);
                pass(metadata);
              }, (err: unknown) => {
                call.sendStatus(grpcError(err, deps.logger));
                stopSender(call);
              });
          },
        }),
    });
}

/**
 * After a refusal's status, resets the call's stream with NO_ERROR: the sender stops sending the rest of its
 * message. Without it the refused stream stays half open, and Node's HTTP/2 server reads and drops every byte the
 * keyless sender goes on sending (16 MiB a call). grpc-js offers no way to do this; the first interceptor's call is
 * grpc-js's base call, which holds the HTTP/2 stream (a private field: capacity-limits.test.ts fails if that moves).
 */
function stopSender(call: grpc.ServerInterceptingCallInterface): void {
  const stream = (call as unknown as { stream?: Partial<http2.ServerHttp2Stream> }).stream;
  if (typeof stream?.close === "function" && !stream.closed) stream.close(http2.constants.NGHTTP2_NO_ERROR);
}

export async function startOtlpGrpc(deps: OtlpGrpcDeps, host: string, port: number): Promise<OtlpGrpcServer> {
  const server = new grpc.Server({
    "grpc.max_receive_message_length": deps.maxBodyBytes,
    "grpc.max_send_message_length": 1024 * 1024,
    "grpc.max_concurrent_streams": deps.limits.maxStreams,
    // The idle limit is grpc-idle.ts's, not grpc-js's "grpc.max_connection_idle_ms" (which let some connections stay twice as long).
    "grpc.keepalive_time_ms": 60_000,
    "grpc.keepalive_timeout_ms": 20_000,
    interceptors: [authenticateFirst(deps)],
  });
  const exportOf = (signal: OtlpSignal): grpc.handleUnaryCall<Buffer, Buffer> => (call, callback) => {
    void (async () => {
      try {
        const [projectId, userId] = String(call.metadata.get(AUTHENTICATED_USER)[0]).split(":").map(Number) as [number, number];
        const decoded = await deps.decoder.decodeOtlp(call.request, "protobuf", false, { projectId, userId }, Date.now(), signal);
        if (!decoded.ok) {
          const code = decoded.status === 413 ? grpc.status.RESOURCE_EXHAUSTED : grpc.status.INVALID_ARGUMENT;
          return callback({ code, details: decoded.message });
        }
        await deps.quota(userId, decoded.spans - decoded.rejectedSpans);
        if (decoded.records > 0) await appendDurably(() => deps.log.append(decoded.events), decoded.records, deps.logger);
        callback(null, Buffer.from(decoded.response.buffer, decoded.response.byteOffset, decoded.response.byteLength));
      } catch (err) {
        callback(grpcError(err, deps.logger));
      }
    })();
  };
  for (const [signal, service] of SERVICES) server.addService(service, { Export: exportOf(signal) });
  const address = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  closeIdleConnections(server, deps.limits.idleMs);
  return {
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.forceShutdown(), 5_000);
        force.unref();
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}

/** "ipv4:127.0.0.1:5000" / "ipv6:[::1]:5000" / "127.0.0.1:5000" → the address (for the bad-key budget per IP). */
function peerIp(peer: string): string {
  const p = peer.replace(/^ipv[46]:/, "");
  const v6 = /^\[(.*)\]:\d+$/.exec(p);
  if (v6) return v6[1]!;
  const i = p.lastIndexOf(":");
  return i > 0 ? p.slice(0, i) : p;
}

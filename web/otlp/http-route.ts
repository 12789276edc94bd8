/**
 * OTLP/HTTP receiver: POST /v1/traces, /v1/logs and /v1/metrics on the web port, so
 * OTEL_EXPORTER_OTLP_ENDPOINT=http://<host>:8080 works (exporters append the signal's path). One handler per signal,
 * the same keys, limits and answers for each. Answers as opentelemetry-proto's specification.md says, in the request's
 * content type (protobuf or JSON): 200 with an ExportTraceServiceResponse (partial_success when spans were
 * refused), 400 for a body that is not an export (do not retry), 401, 413, 415, 429/503 with Retry-After; error
 * bodies are a google.rpc.Status (in JSON it also carries Runwatch's usual `error` object naming the problem).
 *
 * Order of checks: Content-Type (415) → Bearer key (401) → rate limit (429) → size (413) → decode (400) →
 * durable append (503) → 200. A 200 is sent only once the log holds the events.
 */
import type { Context } from "koa";
import type { Logger } from "../../core/logger.js";
import type { EventLog } from "../../core/ports/event-log.js";
import { HttpProblem, toHttpError } from "../http-errors.js";
import { readBodyBytes } from "../json-body.js";
import type { Admission } from "../ingest/admission.js";
import type { BatchDecoder } from "../ingest/decode-thread.js";
import { appendDurably } from "../ingest/durable-append.js";
import type { OtlpFormat } from "../../otlp/export-decode.js";
import type { OtlpSignal } from "../../otlp/signal-decode.js";
import { encodeRpcStatus } from "../../otlp/otlp-protobuf.js";

export interface OtlpHttpDeps {
  readonly admission: Admission;
  readonly decoder: BatchDecoder;
  readonly log: EventLog;
  readonly logger: Logger;
  readonly maxBodyBytes: number;
}

/** google.rpc.Code for an HTTP status (the Status message in error bodies). */
const RPC_CODES: Readonly<Record<number, number>> = { 400: 3, 401: 16, 403: 7, 404: 5, 405: 12, 413: 8, 415: 3, 429: 8, 503: 14 };
const rpcCode = (status: number): number => RPC_CODES[status] ?? 13;

function formatOf(contentType: string | undefined): OtlpFormat | undefined {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  if (type === "application/x-protobuf" || type === "application/protobuf") return "protobuf";
  if (type === "application/json") return "json";
  return undefined;
}

function gzippedOf(ctx: Context): boolean {
  const enc = (ctx.get("Content-Encoding") || "identity").trim().toLowerCase();
  if (enc === "gzip") return true;
  if (enc === "identity") return false;
  throw new HttpProblem(415, "unsupported_encoding", `Content-Encoding ${enc} is not supported; send gzip or identity`, "Content-Encoding");
}

/** Writes an error in the request's format (JSON when the format is unknown). */
function sendOtlpError(ctx: Context, format: OtlpFormat | undefined, err: unknown, logger: Logger): void {
  const e = toHttpError(err);
  if (e.status >= 500 && e.status !== 503) logger.error("OTLP export failed", { err });
  ctx.status = e.status;
  ctx.set(e.headers);
  const message = e.body.error.message;
  if (format === "protobuf") {
    ctx.type = "application/x-protobuf";
    ctx.body = Buffer.from(encodeRpcStatus(rpcCode(e.status), message));
  } else {
    ctx.type = "application/json";
    ctx.body = { code: rpcCode(e.status), message, ...e.body };
  }
}

/** The paths exporters POST each signal to. */
export const OTLP_HTTP_PATHS: Readonly<Record<string, OtlpSignal>> = { "/v1/traces": "traces", "/v1/logs": "logs", "/v1/metrics": "metrics" };

export function otlpHttpHandler(deps: OtlpHttpDeps, signal: OtlpSignal): (ctx: Context) => Promise<void> {
  return async (ctx) => {
    const format = formatOf(ctx.get("Content-Type"));
    try {
      if (format === undefined) {
        throw new HttpProblem(415, "unsupported_media_type", "send an OTLP export as application/x-protobuf or application/json", "Content-Type");
      }
      const gzipped = gzippedOf(ctx);
      const { principal, headers, take } = await deps.admission(ctx.req.headers.authorization, ctx.ip);
      ctx.set(headers);
      const body = await readBodyBytes(ctx, deps.maxBodyBytes, `the export exceeds the limit of ${deps.maxBodyBytes} bytes (RUNWATCH_OTLP_MAX_BODY_BYTES)`);
      const decoded = await deps.decoder.decodeOtlp(body, format, gzipped, principal, Date.now(), signal);
      if (!decoded.ok) {
        throw new HttpProblem(decoded.status, decoded.status === 413 ? "payload_too_large" : "malformed_export", decoded.message);
      }
      await take(decoded.spans - decoded.rejectedSpans);
      if (decoded.records > 0) await appendDurably(() => deps.log.append(decoded.events), decoded.records, deps.logger);
      ctx.status = 200;
      ctx.type = format === "json" ? "application/json" : "application/x-protobuf";
      ctx.body = Buffer.from(decoded.response.buffer, decoded.response.byteOffset, decoded.response.byteLength);
    } catch (err) {
      sendOtlpError(ctx, format, err, deps.logger);
    }
  };
}

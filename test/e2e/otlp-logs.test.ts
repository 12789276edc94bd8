/**
 * OpenTelemetry logs (docs/OTEL.md, Logs) from OpenTelemetry's own JS SDK (@opentelemetry/sdk-logs with the OTLP/HTTP
 * protobuf, OTLP/HTTP JSON and OTLP/gRPC log exporters) to a real server: a record tied to a span is that span's
 * event (its GenAI content fills the span's input and output; an evaluation result becomes a score), even when it
 * comes before the span; records without a span are the run's or the project's log lines, readable by API.
 */
import { context, trace, type Span } from "@opentelemetry/api";
import type { Logger } from "@opentelemetry/api-logs";
import { OTLPLogExporter as GrpcLogExporter } from "@opentelemetry/exporter-logs-otlp-grpc";
import { OTLPLogExporter as JsonLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { OTLPLogExporter as ProtoLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { CompressionAlgorithm } from "@opentelemetry/otlp-exporter-base";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { LoggerProvider, SimpleLogRecordProcessor, type LogRecordExporter } from "@opentelemetry/sdk-logs";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { Metadata } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, startTestServer, until, waitForRun, type TestAccount, type TestServer } from "./harness.js";

let srv: TestServer;
let acct: TestAccount;

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } });
  acct = await srv.account();
});
afterAll(async () => {
  await srv?.close();
});

const resource = resourceFromAttributes({ "service.name": "support-service" });
function loggers(exporter: LogRecordExporter) {
  const p = new LoggerProvider({ resource, processors: [new SimpleLogRecordProcessor({ exporter })] });
  return { logger: p.getLogger("runwatch-logs-test"), flush: () => p.forceFlush(), shutdown: () => p.shutdown() };
}
function tracers(key: string) {
  const p = new BasicTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(new ProtoExporter({ url: `${srv.url}/v1/traces`, headers: { Authorization: `Bearer ${key}` } }))] });
  return { tracer: p.getTracer("runwatch-logs-test"), shutdown: () => p.shutdown() };
}
const inSpan = (span: Span) => trace.setSpan(context.active(), span);

async function get(path: string, key = acct.key): Promise<Record<string, any>> {
  const res = await fetch(`${srv.url}${path}`, bearer(key));
  expect(res.status, path).toBe(200);
  return (await res.json()) as Record<string, any>;
}

/** A chat span whose content and evaluation come as log records, the records exported before the spans. */
async function chatWithLogs(logger: Logger, flushLogs: () => Promise<void>): Promise<{ traceId: string; chatId: string }> {
  const otel = tracers(acct.key);
  const root = otel.tracer.startSpan("invoke_agent support-bot", { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support-bot" } });
  const chat = otel.tracer.startSpan("chat gpt-4o", { attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 10 } }, inSpan(root));
  logger.emit({ eventName: "gen_ai.user.message", body: { content: "Where is order 1234?" }, context: inSpan(chat) });
  logger.emit({ eventName: "gen_ai.choice", body: { index: 0, finish_reason: "stop", message: { role: "assistant", content: "It shipped." } }, context: inSpan(chat) });
  logger.emit({
    eventName: "gen_ai.evaluation.result", context: inSpan(chat),
    attributes: { "gen_ai.evaluation.name": "relevance", "gen_ai.evaluation.score.value": 0.9, "gen_ai.evaluation.explanation": "on topic" },
  });
  logger.emit({ body: "looking up order 1234", severityText: "INFO", severityNumber: 9, context: inSpan(root) });
  await flushLogs();
  chat.end();
  root.end();
  await otel.shutdown();
  return { traceId: root.spanContext().traceId, chatId: chat.spanContext().spanId };
}

describe("OTLP logs from the OpenTelemetry JS SDK", () => {
  it("OTLP/HTTP protobuf with gzip: records before their span show on it, content fills its input and output, an evaluation is a score", async () => {
    const exporter = new ProtoLogExporter({ url: `${srv.url}/v1/logs`, headers: { Authorization: `Bearer ${acct.key}` }, compression: CompressionAlgorithm.GZIP });
    const otel = loggers(exporter);
    const { traceId, chatId } = await chatWithLogs(otel.logger, otel.flush);
    otel.logger.emit({ body: "nightly cache warm-up finished", severityText: "INFO" });
    await otel.shutdown();
    await waitForRun(srv.url, acct.key, traceId, (b) => b.run.status === "success" && b.run.event_count === 4);
    const span = await until("the chat span's logs", () => get(`/api/runs/${traceId}/spans/${chatId}`), (s) => s.logs.length === 3);
    expect(span.logs.map((l: any) => l.event_name)).toEqual(["gen_ai.user.message", "gen_ai.choice", "gen_ai.evaluation.result"]);
    expect(span.input).toEqual([{ role: "user", content: "Where is order 1234?" }]);
    expect(span.output).toEqual({ role: "assistant", content: "It shipped." });
    expect(span.scores).toEqual([expect.objectContaining({ name: "relevance", value: 0.9, comment: "on topic", source: "otel", span_id: chatId })]);
    const runLogs = await get(`/api/runs/${traceId}/logs`);
    expect(runLogs.logs).toHaveLength(4);
    expect(runLogs.logs.find((l: any) => l.body === "looking up order 1234")).toMatchObject({ severity_text: "INFO", service_name: "support-service", trace_id: traceId });
    const found = await until("the project's log line", () => get(`/api/logs?q=${encodeURIComponent("CACHE WARM-UP")}`), (b) => b.logs.length === 1);
    expect(found.logs[0]).toMatchObject({ body: "nightly cache warm-up finished", trace_id: null, span_id: null });
  });

  it("OTLP/HTTP JSON and OTLP/gRPC: the records arrive the same way", async () => {
    const json = new JsonLogExporter({ url: `${srv.url}/v1/logs`, headers: { Authorization: `Bearer ${acct.key}` } });
    const metadata = new Metadata();
    metadata.set("authorization", `Bearer ${acct.key}`);
    const grpc = new GrpcLogExporter({ url: `http://127.0.0.1:${srv.web.otlpGrpcPort}`, metadata, compression: CompressionAlgorithm.GZIP });
    for (const [name, exporter] of [["json", json], ["grpc", grpc]] as const) {
      const otel = loggers(exporter);
      const { traceId, chatId } = await chatWithLogs(otel.logger, otel.flush);
      await otel.shutdown();
      await waitForRun(srv.url, acct.key, traceId, (b) => b.run.status === "success" && b.run.event_count === 4);
      const span = await until(`${name}: the chat span's logs`, () => get(`/api/runs/${traceId}/spans/${chatId}`), (s) => s.logs.length === 3);
      expect(span.output, name).toEqual({ role: "assistant", content: "It shipped." });
      expect(span.scores.map((s: any) => s.name), name).toEqual(["relevance"]);
    }
  });

  it("another project's records with the same trace and span ids never show in this project's run", async () => {
    const exporter = new ProtoLogExporter({ url: `${srv.url}/v1/logs`, headers: { Authorization: `Bearer ${acct.key}` } });
    const otel = loggers(exporter);
    const { traceId, chatId } = await chatWithLogs(otel.logger, otel.flush);
    await otel.shutdown();
    await waitForRun(srv.url, acct.key, traceId, (b) => b.run.status === "success" && b.run.event_count === 4);
    const other = await srv.account();
    const intruder = loggers(new ProtoLogExporter({ url: `${srv.url}/v1/logs`, headers: { Authorization: `Bearer ${other.key}` } }));
    const foreign = trace.setSpanContext(context.active(), { traceId, spanId: chatId, traceFlags: 1 });
    intruder.logger.emit({ eventName: "gen_ai.choice", body: { message: { role: "assistant", content: "injected" } }, context: foreign });
    intruder.logger.emit({ eventName: "gen_ai.evaluation.result", attributes: { "gen_ai.evaluation.name": "injected", "gen_ai.evaluation.score.value": 0 }, context: foreign });
    await intruder.shutdown();
    // The other project sees its own records under that trace id, and only them.
    await until("the other project's records", () => get(`/api/runs/${traceId}/logs`, other.key), (b) => b.logs.length === 2);
    const span = await until("the chat span's logs", () => get(`/api/runs/${traceId}/spans/${chatId}`), (s) => s.logs.length === 3);
    expect(span.output).toEqual({ role: "assistant", content: "It shipped." });
    expect(span.scores.map((s: any) => s.name)).toEqual(["relevance"]);
    expect((await get(`/api/runs/${traceId}/logs`)).logs).toHaveLength(4);
  });
});

/**
 * Spans, log records and metrics through a real OpenTelemetry Collector (built by deploy/otelcol.sh from
 * deploy/otelcol/builder.yaml: otlp receiver → batch → otlphttp exporter, a pipeline per signal) into Runwatch, as a
 * team with a collector in front of its services sends them: the JS SDK exports OTLP/gRPC to the collector, the
 * collector OTLP/HTTP protobuf + gzip to Runwatch.
 * Skips cleanly where the collector binary was not built (no Go); CI builds it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { context, trace } from "@opentelemetry/api";
import { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-grpc";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-grpc";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { LoggerProvider, SimpleLogRecordProcessor } from "@opentelemetry/sdk-logs";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, freePort, startTestServer, until, waitForRun, type TestAccount, type TestServer } from "./harness.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const COLLECTOR = path.join(ROOT, "deploy/.cache/otelcol/otelcol-runwatch/otelcol-runwatch");
const haveCollector = existsSync(COLLECTOR);
if (!haveCollector && process.env.REQUIRE_COLLECTOR === "1") throw new Error(`REQUIRE_COLLECTOR=1 but ${COLLECTOR} is missing (run deploy/otelcol.sh)`);

let srv: TestServer;
let acct: TestAccount;
let collector: ChildProcess | undefined;
let collectorGrpc = 0;
let log = "";

async function startCollector(runwatchUrl: string, key: string): Promise<void> {
  collectorGrpc = await freePort();
  const dir = await fs.mkdtemp(path.join(srv.dataDir, "otelcol-"));
  const config = path.join(dir, "config.yaml");
  await fs.writeFile(config, [
    "receivers:",
    "  otlp:",
    "    protocols:",
    `      grpc: { endpoint: "127.0.0.1:${collectorGrpc}" }`,
    "processors:",
    "  batch: { timeout: 100ms }",
    "exporters:",
    "  otlphttp/runwatch:",
    `    endpoint: ${runwatchUrl}`,
    "    compression: gzip",
    `    headers: { Authorization: "Bearer ${key}" }`,
    "service:",
    `  telemetry: { metrics: { level: none } }`,
    "  pipelines:",
    "    traces: { receivers: [otlp], processors: [batch], exporters: [otlphttp/runwatch] }",
    "    logs: { receivers: [otlp], processors: [batch], exporters: [otlphttp/runwatch] }",
    "    metrics: { receivers: [otlp], processors: [batch], exporters: [otlphttp/runwatch] }",
  ].join("\n"));
  collector = spawn(COLLECTOR, ["--config", `file:${config}`], { stdio: ["ignore", "pipe", "pipe"] });
  collector.stdout!.on("data", (d) => (log += d));
  collector.stderr!.on("data", (d) => (log += d));
  const deadline = Date.now() + 30_000;
  while (!/Everything is ready/.test(log)) {
    if (collector.exitCode !== null || Date.now() > deadline) throw new Error(`the collector did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(!haveCollector)("through an OpenTelemetry Collector", () => {
  beforeAll(async () => {
    srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } });
    acct = await srv.account();
    await startCollector(srv.url, acct.key);
  }, 60_000);
  afterAll(async () => {
    if (collector && collector.exitCode === null) {
      collector.kill("SIGTERM");
      await new Promise((r) => collector!.once("exit", r));
    }
    await srv?.close();
  });

  it("SDK → collector (gRPC) → Runwatch (OTLP/HTTP protobuf, gzip): the trace is a run with its LLM call", async () => {
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": "checkout" }),
      spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `http://127.0.0.1:${collectorGrpc}` }))],
    });
    const tracer = provider.getTracer("collector-test");
    const root = tracer.startSpan("invoke_agent cart-helper", { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "cart-helper" } });
    const llm = tracer.startSpan("chat gpt-4o-mini", {
      attributes: { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini", "gen_ai.usage.input_tokens": 64, "gen_ai.usage.output_tokens": 8 },
    }, trace.setSpan(context.active(), root));
    llm.end();
    root.end();
    await provider.shutdown();
    const traceId = root.spanContext().traceId;
    const { run } = await waitForRun(srv.url, acct.key, traceId, (b) => b.run.status === "success" && b.run.llm_calls === 1, 30_000)
      .catch((err: Error) => { throw new Error(`${err.message}\ncollector log:\n${log.slice(-3000)}`); });
    expect(run).toMatchObject({ agent_name: "cart-helper", prompt_tokens: 64, completion_tokens: 8, framework: "collector-test" });
  });

  it("log records and metrics through the collector: a span's records show on it; metrics are answered, never an export error", async () => {
    const url = `http://127.0.0.1:${collectorGrpc}`;
    const resource = resourceFromAttributes({ "service.name": "checkout" });
    const logs = new LoggerProvider({ resource, processors: [new SimpleLogRecordProcessor({ exporter: new OTLPLogExporter({ url }) })] });
    const tracing = new BasicTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url }))] });
    const root = tracing.getTracer("collector-test").startSpan("invoke_agent cart-helper", { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "cart-helper" } });
    const logger = logs.getLogger("collector-test");
    logger.emit({ body: "cart emptied by the agent", severityText: "WARN", severityNumber: 13, context: trace.setSpan(context.active(), root) });
    logger.emit({ body: "collector heartbeat from checkout", severityText: "INFO" });
    await logs.shutdown();
    root.end();
    await tracing.shutdown();
    const traceId = root.spanContext().traceId;
    const spanId = root.spanContext().spanId;
    await waitForRun(srv.url, acct.key, traceId, (b) => b.run.status === "success", 30_000)
      .catch((err: Error) => { throw new Error(`${err.message}\ncollector log:\n${log.slice(-3000)}`); });
    const get = async (p: string) => (await (await fetch(`${srv.url}${p}`, bearer(acct.key))).json()) as { logs: Record<string, unknown>[] };
    const span = await until("the span's record", () => get(`/api/runs/${traceId}/spans/${spanId}`), (b) => (b.logs ?? []).length === 1);
    expect(span.logs[0]).toMatchObject({ body: "cart emptied by the agent", severity_text: "WARN", service_name: "checkout", span_id: spanId });
    const line = await until("the project's line", () => get(`/api/logs?q=${encodeURIComponent("collector heartbeat")}`), (b) => b.logs.length === 1);
    expect(line.logs[0]).toMatchObject({ body: "collector heartbeat from checkout", trace_id: null });

    // Metrics: Runwatch answers each export with a partial success that counts the points it does not keep (it
    // derives these figures from spans); the collector logs that answer and counts the export as delivered.
    const reader = new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter({ url }), exportIntervalMillis: 600_000 });
    const meters = new MeterProvider({ resource, readers: [reader] });
    meters.getMeter("collector-test").createHistogram("gen_ai.client.token.usage").record(64, { "gen_ai.token.type": "input" });
    await meters.forceFlush();
    await meters.shutdown();
    const answered = /Partial success response[^\n]*"otelcol.signal": "metrics"/;
    await until("the collector's metrics export answered", async () => log, (l) => answered.test(l), 15_000);
    expect(log).not.toMatch(/Exporting failed|dropping data|permanent error/i);
  });
});

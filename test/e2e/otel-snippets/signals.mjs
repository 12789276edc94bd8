// npm install @opentelemetry/api @opentelemetry/resources @opentelemetry/sdk-trace-base @opentelemetry/sdk-logs @opentelemetry/sdk-metrics @opentelemetry/exporter-trace-otlp-proto @opentelemetry/exporter-logs-otlp-proto @opentelemetry/exporter-metrics-otlp-proto
// Traces, logs and metrics to one endpoint: the exporters read OTEL_EXPORTER_OTLP_* (above).
import { context, trace } from "@opentelemetry/api";
import { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchLogRecordProcessor, LoggerProvider } from "@opentelemetry/sdk-logs";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";

const resource = resourceFromAttributes({ "service.name": "support-service" });
const tracing = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
const logging = new LoggerProvider({ resource, processors: [new BatchLogRecordProcessor({ exporter: new OTLPLogExporter() })] });
const metering = new MeterProvider({ resource, readers: [new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter() })] });
const logger = logging.getLogger("support-bot");

const chat = tracing.getTracer("support-bot").startSpan("chat gpt-4o", { attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o" } });
const inChat = trace.setSpan(context.active(), chat); // a record in a span's context is that span's event
logger.emit({ eventName: "gen_ai.user.message", body: { content: "Where is my order?" }, context: inChat });
logger.emit({ eventName: "gen_ai.evaluation.result", attributes: { "gen_ai.evaluation.name": "relevance", "gen_ai.evaluation.score.value": 0.9 }, context: inChat });
logger.emit({ body: "order service answered in 120 ms", severityText: "INFO", context: inChat });
metering.getMeter("support-bot").createHistogram("gen_ai.client.token.usage").record(42, { "gen_ai.token.type": "input" });
chat.end();
console.log(chat.spanContext().traceId);
await Promise.all([tracing.shutdown(), logging.shutdown(), metering.shutdown()]); // exports what is left

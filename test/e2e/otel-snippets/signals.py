# pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-http
# Traces, logs and metrics to one endpoint: the exporters read OTEL_EXPORTER_OTLP_* (above).
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

resource = Resource.create({"service.name": "support-service"})
tracing = TracerProvider(resource=resource)
tracing.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
logging = LoggerProvider(resource=resource)
logging.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
metering = MeterProvider(resource=resource, metric_readers=[PeriodicExportingMetricReader(OTLPMetricExporter())])
logger = logging.get_logger("support-bot")

chat_attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}
with tracing.get_tracer("support-bot").start_as_current_span("chat gpt-4o", attributes=chat_attributes) as chat:
    # A record emitted inside a span is that span's event.
    logger.emit(event_name="gen_ai.user.message", body={"content": "Where is my order?"})
    logger.emit(
        event_name="gen_ai.evaluation.result",
        attributes={"gen_ai.evaluation.name": "relevance", "gen_ai.evaluation.score.value": 0.9},
    )
    logger.emit(body="order service answered in 120 ms", severity_text="INFO")
    metering.get_meter("support-bot").create_histogram("gen_ai.client.token.usage").record(42, {"gen_ai.token.type": "input"})
print(format(chat.get_span_context().trace_id, "032x"))
for signal in (tracing, logging, metering):
    signal.shutdown()  # exports what is left

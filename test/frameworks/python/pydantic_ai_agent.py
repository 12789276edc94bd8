# pip install "pydantic-ai-slim[openai]" opentelemetry-sdk opentelemetry-exporter-otlp-proto-http
# Each agent run is one run in Runwatch, named by the agent's name.
import sys

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # reads OTEL_EXPORTER_OTLP_*
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from pydantic_ai import Agent

provider = TracerProvider(resource=Resource.create({"service.name": "support-service"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
Agent.instrument_all()  # every agent emits OpenTelemetry GenAI spans to the global tracer provider

agent = Agent("openai:gpt-4o-mini", name="support-bot", instructions="Answer briefly.")  # OPENAI_API_KEY, OPENAI_BASE_URL


@agent.tool_plain
def weather(city: str) -> dict:
    """Today's weather in a city."""
    return {"city": city, "forecast": "sunny"}


try:
    print(agent.run_sync(sys.argv[1] if len(sys.argv) > 1 else "What is the weather in Paris?").output)
finally:
    provider.shutdown()  # exports what is left

# pip install openai-agents openinference-instrumentation-openai-agents opentelemetry-sdk opentelemetry-exporter-otlp-proto-http
# Each Runner.run is one run in Runwatch ("Agent workflow"), named by the agent's name.
import sys

from agents import Agent, Runner, function_tool
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # reads OTEL_EXPORTER_OTLP_*
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "support-service"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)


@function_tool
def weather(city: str) -> dict:
    """Today's weather in a city."""
    return {"city": city, "forecast": "sunny"}


agent = Agent(name="support-bot", instructions="Answer briefly.", model="gpt-4o-mini", tools=[weather])  # OPENAI_API_KEY, OPENAI_BASE_URL

try:
    print(Runner.run_sync(agent, sys.argv[1] if len(sys.argv) > 1 else "What is the weather in Paris?").final_output)
finally:
    provider.shutdown()  # exports what is left

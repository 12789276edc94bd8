# pip install "smolagents[openai]" openinference-instrumentation-smolagents opentelemetry-sdk opentelemetry-exporter-otlp-proto-http
# Each agent.run is one run in Runwatch, named by the agent's name.
import os
import sys

from openinference.instrumentation.smolagents import SmolagentsInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # reads OTEL_EXPORTER_OTLP_*
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from smolagents import OpenAIServerModel, ToolCallingAgent, tool

provider = TracerProvider(resource=Resource.create({"service.name": "support-service"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
SmolagentsInstrumentor().instrument(tracer_provider=provider)


@tool
def weather(city: str) -> dict:
    """Today's weather in a city.

    Args:
        city: The city's name.
    """
    return {"city": city, "forecast": "sunny"}


model = OpenAIServerModel(model_id="gpt-4o-mini", api_base=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"])
agent = ToolCallingAgent(tools=[weather], model=model, name="support_bot", max_steps=3)

try:
    print(agent.run(sys.argv[1] if len(sys.argv) > 1 else "What is the weather in Paris?"))
finally:
    provider.shutdown()  # exports what is left

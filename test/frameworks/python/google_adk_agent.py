# pip install google-adk litellm opentelemetry-sdk opentelemetry-exporter-otlp-proto-http
# Each runner.run is one run in Runwatch, named by the agent's name. ADK records to the global tracer provider;
# OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY puts prompts, answers and tool arguments on its spans.
import os
import sys

from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm
from google.adk.runners import InMemoryRunner
from google.genai import types
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # reads OTEL_EXPORTER_OTLP_*
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "support-service"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)


def weather(city: str) -> dict:
    """Today's weather in a city."""
    return {"city": city, "forecast": "sunny"}


model = LiteLlm(model="openai/gpt-4o-mini", api_base=os.environ["OPENAI_BASE_URL"])  # OPENAI_API_KEY
agent = LlmAgent(name="support_bot", model=model, tools=[weather], instruction="Answer briefly.")
runner = InMemoryRunner(agent=agent, app_name="support")
session = runner.session_service.create_session_sync(app_name="support", user_id="user-1")
question = types.Content(role="user", parts=[types.Part(text=sys.argv[1] if len(sys.argv) > 1 else "What is the weather in Paris?")])

try:
    for event in runner.run(user_id="user-1", session_id=session.id, new_message=question):
        if event.is_final_response() and event.content and event.content.parts:
            print(event.content.parts[0].text)
finally:
    provider.shutdown()  # exports what is left

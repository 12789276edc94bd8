# pip install crewai openinference-instrumentation-crewai openinference-instrumentation-openai opentelemetry-sdk opentelemetry-exporter-otlp-proto-http
# Each crew.kickoff is one run in Runwatch. CrewAI's instrumentation traces the crew, its agents, tasks and tools;
# OpenAI's traces the model calls (CrewAI calls OpenAI models with the OpenAI client).
import os
import sys

from crewai import LLM, Agent, Crew, Task
from crewai.tools import tool
from openinference.instrumentation.crewai import CrewAIInstrumentor
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # reads OTEL_EXPORTER_OTLP_*
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "support-service"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
CrewAIInstrumentor().instrument(tracer_provider=provider)
OpenAIInstrumentor().instrument(tracer_provider=provider)


@tool("weather")
def weather(city: str) -> dict:
    """Today's weather in a city."""
    return {"city": city, "forecast": "sunny"}


llm = LLM(model="gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"])  # OPENAI_API_KEY
agent = Agent(role="support-bot", goal="Answer questions briefly.", backstory="You help with the weather.", tools=[weather], llm=llm)
task = Task(description="{question}", expected_output="A short answer.", agent=agent)
crew = Crew(agents=[agent], tasks=[task])

try:
    print(crew.kickoff(inputs={"question": sys.argv[1] if len(sys.argv) > 1 else "What is the weather in Paris?"}))
finally:
    provider.shutdown()  # exports what is left

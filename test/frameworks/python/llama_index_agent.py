# pip install llama-index-core llama-index-llms-openai openinference-instrumentation-llama-index opentelemetry-sdk opentelemetry-exporter-otlp-proto-http
# Each agent.run is one run in Runwatch, named by the agent's name.
import asyncio
import os
import sys

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.llms.openai import OpenAI
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # reads OTEL_EXPORTER_OTLP_*
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "support-service"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
LlamaIndexInstrumentor().instrument(tracer_provider=provider)


def weather(city: str) -> dict:
    """Today's weather in a city."""
    return {"city": city, "forecast": "sunny"}


llm = OpenAI(model="gpt-4o-mini", api_base=os.environ["OPENAI_BASE_URL"])  # OPENAI_API_KEY
agent = FunctionAgent(name="support-bot", tools=[weather], llm=llm, system_prompt="Answer briefly.")



async def main(question: str) -> None:
    print(await agent.run(question))


try:
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "What is the weather in Paris?"))
finally:
    provider.shutdown()  # exports what is left

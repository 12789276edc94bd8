# pip install openai opentelemetry-sdk opentelemetry-exporter-otlp-proto-http opentelemetry-instrumentation-openai-v2
# Prompts and answers are recorded only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.
# Each model call is a span; the agent's own span around them makes them one run.
import json
import sys

from openai import OpenAI
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # reads OTEL_EXPORTER_OTLP_*
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "support-service"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
OpenAIInstrumentor().instrument()
tracer = trace.get_tracer("support-bot")
client = OpenAI()  # OPENAI_API_KEY, OPENAI_BASE_URL

TOOLS = [{"type": "function", "function": {"name": "weather", "description": "Today's weather in a city",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def weather(city: str) -> dict:
    return {"city": city, "forecast": "sunny"}


def answer(question: str) -> str:
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support-bot"}
    with tracer.start_as_current_span("invoke_agent support-bot", attributes=agent):
        messages = [{"role": "user", "content": question}]
        first = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS).choices[0].message
        messages.append(first.model_dump(exclude_none=True))
        for call in first.tool_calls or []:
            tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.function.name,
                    "gen_ai.tool.call.arguments": call.function.arguments}
            with tracer.start_as_current_span(f"execute_tool {call.function.name}", attributes=tool) as span:
                result = json.dumps(weather(**json.loads(call.function.arguments)))
                span.set_attribute("gen_ai.tool.call.result", result)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        stream = client.chat.completions.create(
            model="gpt-4o-mini", messages=messages, stream=True, stream_options={"include_usage": True})
        return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)


try:
    print(answer(sys.argv[1] if len(sys.argv) > 1 else "What is the weather in Paris?"))
finally:
    provider.shutdown()  # exports what is left

# pip install "strands-agents[openai,otel]"
# Each agent call is one run in Runwatch, named by the agent's name. OTEL_SERVICE_NAME names the service.
import os
import sys

from strands import Agent, tool
from strands.models.openai import OpenAIModel
from strands.telemetry import StrandsTelemetry

telemetry = StrandsTelemetry().setup_otlp_exporter()  # reads OTEL_EXPORTER_OTLP_*


@tool
def weather(city: str) -> dict:
    """Today's weather in a city.

    Args:
        city: The city's name.
    """
    return {"city": city, "forecast": "sunny"}


model = OpenAIModel(client_args={"base_url": os.environ["OPENAI_BASE_URL"]}, model_id="gpt-4o-mini")  # OPENAI_API_KEY
agent = Agent(name="support-bot", model=model, tools=[weather], system_prompt="Answer briefly.", callback_handler=None)

try:
    print(agent(sys.argv[1] if len(sys.argv) > 1 else "What is the weather in Paris?"))
finally:
    telemetry.tracer_provider.shutdown()  # exports what is left

"""Runwatch client: send AI agent run events (runs, steps, tool calls, human input) to a Runwatch server.

    from runwatch import Runwatch
    client = Runwatch()                      # RUNWATCH_API_KEY / RUNWATCH_BASE_URL
    with client.run(agent_name="triage", input={"ticket": 42}) as run:
        with run.step("classify"):
            ...

LangGraph / LangChain: ``from runwatch.langchain import CallbackHandler``.
"""

__version__ = "0.1.0"

from ._experiments import ExperimentSummary
from ._prompts import Prompt, PromptVariableError
from ._transport import TransportStats
from .client import (
    HumanInput,
    Run,
    Runwatch,
    Step,
    ToolCall,
    current_run,
    get_client,
    set_client,
)
from .errors import HumanInputTimeout, RunwatchError

__all__ = [
    "ExperimentSummary",
    "HumanInput",
    "HumanInputTimeout",
    "Prompt",
    "PromptVariableError",
    "Run",
    "Runwatch",
    "RunwatchError",
    "Step",
    "ToolCall",
    "TransportStats",
    "__version__",
    "current_run",
    "get_client",
    "set_client",
]

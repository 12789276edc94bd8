"""Real LangGraph graphs used by the handler tests: a chat model (LangChain's fake chat model, since no LLM
endpoint is reachable), a tool through LangGraph's ToolNode, a human-review interrupt, a failing node."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import interrupt


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"It is sunny and 21°C in {city}."


def chat_model() -> GenericFakeChatModel:
    """Answers first with a tool call, then with a final answer; each reply reports token usage."""
    replies = [
        AIMessage(
            content="",
            tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "call-1"}],
            usage_metadata={"input_tokens": 120, "output_tokens": 15, "total_tokens": 135},
            response_metadata={"model_name": "gpt-4o-mini"},
        ),
        AIMessage(
            content="Paris is sunny today, 21°C.",
            usage_metadata={"input_tokens": 180, "output_tokens": 25, "total_tokens": 205},
            response_metadata={"model_name": "gpt-4o-mini"},
        ),
    ]
    return GenericFakeChatModel(messages=iter(replies * 50))


def build_graph(*, fail_in: str | None = None, name: str = "weather-agent", checkpointer: Any = None) -> Any:
    """agent → tools → agent → review (interrupt) → END. `fail_in` makes that node raise."""
    model = chat_model()

    def agent(state: MessagesState) -> dict[str, Any]:
        if fail_in == "agent":
            raise RuntimeError("the model endpoint exploded")
        return {"messages": [model.invoke(state["messages"])]}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "tools" if getattr(last, "tool_calls", None) else "review"

    def review(state: MessagesState) -> dict[str, Any]:
        if fail_in == "review":
            raise ValueError("reviewer crashed")
        verdict = interrupt({"question": "Send this answer to the customer?", "draft": state["messages"][-1].content})
        return {"messages": [AIMessage(content=f"review: {verdict}")]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode([get_weather]))
    g.add_node("review", review)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", route, ["tools", "review"])
    g.add_edge("tools", "agent")
    g.add_edge("review", END)
    return g.compile(checkpointer=checkpointer or InMemorySaver(), name=name)


def build_graph_with_subgraph() -> Any:
    inner = StateGraph(MessagesState)
    inner.add_node("draft", lambda s: {"messages": [AIMessage(content="drafted")]})
    inner.add_node("polish", lambda s: {"messages": [AIMessage(content="polished")]})
    inner.add_edge(START, "draft")
    inner.add_edge("draft", "polish")
    writer = inner.compile(name="writer")

    def plan(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(content="plan")]}

    def call_writer(state: MessagesState) -> dict[str, Any]:  # a node that invokes a compiled graph itself
        out = writer.invoke({"messages": state["messages"]})
        return {"messages": out["messages"][-1:]}

    g = StateGraph(MessagesState)
    g.add_node("plan", plan)
    g.add_node("writer", writer)  # a subgraph as a node
    g.add_node("rewrite", call_writer)
    g.add_edge(START, "plan")
    g.add_edge("plan", "writer")
    g.add_edge("writer", "rewrite")
    g.add_edge("rewrite", END)
    return g.compile(name="nested-agent")

"""Real LangGraph graphs used by the handler tests: a chat model (LangChain's fake chat model, since no LLM
endpoint is reachable), a tool through LangGraph's ToolNode, a human-review interrupt, a failing node."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Send, interrupt


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


def _fake(
    model_name: str, usage: list[tuple[int, int]], *, first_tool_call: bool = False, repeat: int = 50
) -> GenericFakeChatModel:
    replies = []
    for i, (inp, out) in enumerate(usage):
        calls = (
            [{"name": "get_weather", "args": {"city": "Lisbon"}, "id": f"call-{i}"}]
            if first_tool_call and i == 0
            else []
        )
        replies.append(
            AIMessage(
                content="" if calls else f"{model_name} answer {i}",
                tool_calls=calls,
                usage_metadata={"input_tokens": inp, "output_tokens": out, "total_tokens": inp + out},
                response_metadata={"model_name": model_name},
            )
        )
    return GenericFakeChatModel(messages=iter(replies * repeat))


class TripState(MessagesState):
    notes: Annotated[list[str], operator.add]


class TripBranch(TypedDict):
    topic: str


# Token usage of every model call build_react_graph makes, in the order they are made.
REACT_AGENT_USAGE = [(120, 15), (180, 25)]  # gpt-4o: tool call, then the answer
REACT_RESEARCH_USAGE = (50, 10)  # claude-3-5-haiku, once per Send branch (3)
REACT_DRAFT_USAGE = (70, 20)  # claude-3-5-haiku inside the writer subgraph
REACT_POLISH_USAGE = (40, 8)  # gpt-4o after the human's answer


def build_react_graph(checkpointer: Any = None) -> Any:
    """agent (gpt-4o) ⇄ tools → three parallel research branches (Send, claude) → writer subgraph (draft, claude)
    → review: interrupt(), then a polishing call (gpt-4o) after the answer."""
    gpt = _fake("gpt-4o", [*REACT_AGENT_USAGE, REACT_POLISH_USAGE], first_tool_call=True)
    claude = _fake("claude-3-5-haiku", [REACT_RESEARCH_USAGE] * 3 + [REACT_DRAFT_USAGE])

    def agent(state: TripState) -> dict[str, Any]:
        return {"messages": [gpt.invoke(state["messages"])]}

    def route(state: TripState) -> Any:
        if getattr(state["messages"][-1], "tool_calls", None):
            return "tools"
        return [Send("research", {"topic": t}) for t in ("flights", "hotels", "weather")]

    def research(branch: TripBranch) -> dict[str, Any]:
        reply = claude.invoke(f"research {branch['topic']}")
        return {"notes": [f"{branch['topic']}: {reply.content}"]}

    inner = StateGraph(TripState)
    inner.add_node("draft", lambda s: {"messages": [claude.invoke("draft from " + "; ".join(s["notes"]))]})
    inner.add_edge(START, "draft")
    writer = inner.compile(name="writer")

    def review(state: TripState) -> dict[str, Any]:
        verdict = interrupt({"question": "Book this trip?", "draft": state["messages"][-1].content})
        return {"messages": [gpt.invoke(f"polish ({verdict})")]}

    g = StateGraph(TripState)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode([get_weather]))
    g.add_node("research", research)
    g.add_node("writer", writer)
    g.add_node("review", review)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", route, ["tools", "research"])
    g.add_edge("tools", "agent")
    g.add_edge("research", "writer")
    g.add_edge("writer", "review")
    g.add_edge("review", END)
    return g.compile(checkpointer=checkpointer or InMemorySaver(), name="trip-planner")

"""The LangChain/LangGraph callback handler with real LangGraph graphs, events captured on loopback."""

from __future__ import annotations

import asyncio
import sys
import threading
import uuid
from typing import Any

import pytest

pytest.importorskip("langgraph")

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from langgraph.types import Command

from runwatch import Prompt, Runwatch
from runwatch.langchain import CallbackHandler, usage_from_llm_result
from runwatch.langgraph import resume_from_dashboard

from .capture_server import CaptureServer
from .graphs import build_graph, build_graph_with_subgraph


def by_run(capture: CaptureServer) -> dict[str, list[dict[str, Any]]]:
    runs: dict[str, list[dict[str, Any]]] = {}
    for e in capture.events():
        runs.setdefault(e["sdk_run_id"], []).append(e)
    return runs


def by_session(capture: CaptureServer) -> dict[str, list[dict[str, Any]]]:
    """Events by session_id (the LangGraph thread), in the order sent."""
    sessions: dict[str, list[dict[str, Any]]] = {}
    for e in capture.events():
        sessions.setdefault(e.get("session_id") or "", []).append(e)
    return sessions


# LangGraph's interrupt() reads its config from a contextvar, which asyncio tasks inherit only from 3.11 on.
needs_async_contextvars = pytest.mark.skipif(
    sys.version_info < (3, 11), reason="LangGraph interrupt() in async graphs needs Python >= 3.11"
)


def summary(events: list[dict[str, Any]]) -> list[str]:
    out = []
    for e in events:
        p = e["payload"]
        if e["event_type"] == "step" and p.get("kind") == "llm":
            out.append(f"llm:{p['node_name']}:{p['phase']}")
        elif e["event_type"] == "step":
            out.append(f"step:{p['node_name']}:{p['phase']}")
        elif e["event_type"] == "tool_call":
            out.append(f"tool:{p['tool_name']}:{p['phase']}")
        else:
            out.append(e["event_type"])
    return out


EXPECTED_UNTIL_INTERRUPT = [
    "run_start",
    "step:agent:start",
    "llm:GenericFakeChatModel:start",
    "llm:GenericFakeChatModel:end",
    "step:agent:end",
    "step:tools:start",
    "tool:get_weather:start",
    "tool:get_weather:end",
    "step:tools:end",
    "step:agent:start",
    "llm:GenericFakeChatModel:start",
    "llm:GenericFakeChatModel:end",
    "step:agent:end",
    "step:review:start",
    "step:review:end",
    "human_input_requested",
]
EXPECTED_AFTER_RESUME = ["human_input_received", "step:review:start", "step:review:end", "run_end"]


def test_graph_with_tool_and_interrupt_then_resume(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    graph = build_graph()
    handler = CallbackHandler(client)
    thread = f"thread-{uuid.uuid4()}"
    config: dict[str, Any] = {"configurable": {"thread_id": thread}, "callbacks": [handler]}

    out = graph.invoke({"messages": [HumanMessage("What's the weather in Paris?")]}, config)
    assert "__interrupt__" in out
    assert client.flush(5)
    runs = by_run(capture)
    (rid,) = runs  # one run per invocation: its own id, the thread its session
    assert rid != thread and handler.sdk_run_id_for_thread(thread) == rid
    assert {e["session_id"] for e in runs[rid]} == {thread}
    assert summary(runs[rid]) == EXPECTED_UNTIL_INTERRUPT  # no run_end: the run waits, it did not fail

    out = graph.invoke(Command(resume="yes, send it"), config)
    assert out["messages"][-1].content == "review: yes, send it"
    assert client.flush(5)
    assert list(by_run(capture)) == [rid]  # the resume continued the paused run
    events = by_run(capture)[rid]
    assert summary(events) == EXPECTED_UNTIL_INTERRUPT + EXPECTED_AFTER_RESUME

    start = events[0]
    assert start["agent_name"] == "weather-agent"
    assert start["payload"]["framework"] == "langgraph"
    assert start["payload"]["input"] == {"messages": [{"type": "human", "content": "What's the weather in Paris?"}]}
    tool_start, tool_end = events[6]["payload"], events[7]["payload"]
    assert tool_start["input_preview"] == '{"city": "Paris"}'
    assert tool_end["output_preview"] == "It is sunny and 21°C in Paris."
    assert isinstance(tool_end["duration_ms"], int)
    agent_end = events[4]["payload"]
    assert agent_end["output"]["messages"][0]["tool_calls"][0]["name"] == "get_weather"
    asked = events[15]["payload"]
    assert asked["question"] == "Send this answer to the customer?"
    assert asked["context"]["draft"] == "Paris is sunny today, 21°C."
    assert asked["context"]["node"] == "review"
    assert asked["channel"] == "langgraph"
    assert events[16]["payload"] == {"response": "yes, send it", "responded_by": "langgraph"}
    # Spans: LangChain's run ids; each model call nests in its node, the tool in the tools node, and carries
    # its own usage (the server sums them into the run).
    by_span = {e["span_id"]: e for e in events if e.get("span_id")}
    llm_ends = [
        e
        for e in events
        if e["event_type"] == "step" and e["payload"].get("kind") == "llm" and e["payload"]["phase"] == "end"
    ]
    assert len(llm_ends) == 2
    for e in llm_ends:
        assert by_span[e["parent_span_id"]]["payload"]["node_name"] == "agent"
        assert e["payload"]["model"] == "gpt-4o-mini"
    assert sum(e["payload"]["prompt_tokens"] for e in llm_ends) == 300
    assert sum(e["payload"]["completion_tokens"] for e in llm_ends) == 40
    assert by_span[events[6]["parent_span_id"]]["payload"]["node_name"] == "tools"
    assert events[6]["span_id"] == events[7]["span_id"]
    end = events[-1]["payload"]
    assert (end["prompt_tokens"], end["completion_tokens"], end["total_tokens"]) == (300, 40, 340)
    assert end["model"] == "gpt-4o-mini"
    assert end["output"]["messages"][-1]["content"] == "review: yes, send it"
    assert all(e["agent_name"] == "weather-agent" for e in events)


def test_failing_node_ends_the_run_in_error_with_traceback(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    graph = build_graph(fail_in="agent")
    config = {"configurable": {"thread_id": "fail-1"}, "callbacks": [CallbackHandler(client)]}
    with pytest.raises(RuntimeError, match="exploded"):
        graph.invoke({"messages": [HumanMessage("hi")]}, config)
    assert client.flush(5)
    events = by_session(capture)["fail-1"]
    assert summary(events) == ["run_start", "step:agent:start", "step:agent:end", "error"]
    assert events[2]["payload"]["error"] == "RuntimeError: the model endpoint exploded"
    err = events[-1]["payload"]
    assert err["error_type"] == "RuntimeError"
    assert err["error_message"] == "the model endpoint exploded"
    assert "Traceback (most recent call last)" in err["traceback"]
    assert "in agent" in err["traceback"]


@needs_async_contextvars
async def test_async_invocations_run_concurrently_and_stay_apart(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    handler = CallbackHandler(client)  # one handler shared by concurrent runs

    async def one(i: int) -> None:
        graph = build_graph()
        config = {"configurable": {"thread_id": f"async-{i}"}, "callbacks": [handler]}
        await graph.ainvoke({"messages": [HumanMessage(f"q{i}")]}, config)
        await graph.ainvoke(Command(resume=f"ok {i}"), config)

    await asyncio.gather(*(one(i) for i in range(4)))
    assert client.flush(5)
    runs = by_session(capture)
    assert sorted(runs) == [f"async-{i}" for i in range(4)]
    assert len(by_run(capture)) == 4
    for i in range(4):
        assert summary(runs[f"async-{i}"]) == EXPECTED_UNTIL_INTERRUPT + EXPECTED_AFTER_RESUME
        assert runs[f"async-{i}"][16]["payload"]["response"] == f"ok {i}"
        assert runs[f"async-{i}"][-1]["payload"]["total_tokens"] == 340


@needs_async_contextvars
async def test_astream_reports_like_invoke(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    graph = build_graph()
    config = {"configurable": {"thread_id": "stream-1"}, "callbacks": [CallbackHandler(client)]}
    chunks = [c async for c in graph.astream({"messages": [HumanMessage("hi")]}, config, stream_mode="updates")]
    assert any("__interrupt__" in c for c in chunks)
    chunks = [c async for c in graph.astream(Command(resume="fine"), config, stream_mode="messages")]
    assert chunks
    assert client.flush(5)
    assert summary(by_session(capture)["stream-1"]) == EXPECTED_UNTIL_INTERRUPT + EXPECTED_AFTER_RESUME


def test_threads_share_one_handler(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    handler = CallbackHandler(client)
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            graph = build_graph()
            config = {"configurable": {"thread_id": f"th-{i}"}, "callbacks": [handler]}
            graph.invoke({"messages": [HumanMessage("q")]}, config)
            graph.invoke(Command(resume="y"), config)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert client.flush(5)
    runs = by_session(capture)
    assert len(by_run(capture)) == 6
    for i in range(6):
        assert summary(runs[f"th-{i}"]) == EXPECTED_UNTIL_INTERRUPT + EXPECTED_AFTER_RESUME
    assert not handler._roots and not handler._owner  # state is released when runs end


def test_subgraphs_are_steps_of_the_outer_run(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    graph = build_graph_with_subgraph()
    graph.invoke({"messages": [HumanMessage("write")]}, {"callbacks": [CallbackHandler(client)]})
    assert client.flush(5)
    runs = by_run(capture)
    assert len(runs) == 1
    ((rid, events),) = runs.items()
    assert uuid.UUID(rid).version == 4  # no thread_id: a fresh id
    assert summary(events) == [
        "run_start",
        "step:plan:start",
        "step:plan:end",
        "step:writer:start",
        "step:writer/draft:start",
        "step:writer/draft:end",
        "step:writer/polish:start",
        "step:writer/polish:end",
        "step:writer:end",
        "step:rewrite:start",
        "step:rewrite/draft:start",  # a graph invoked inside a node: its nodes are under that node
        "step:rewrite/draft:end",
        "step:rewrite/polish:start",
        "step:rewrite/polish:end",
        "step:rewrite:end",
        "run_end",
    ]
    assert events[0]["agent_name"] == "nested-agent"


def test_run_id_options(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    # run_id_from_thread: the behaviour before sessions, the thread id is the run id and every turn adds to it
    handler = CallbackHandler(client, run_id_from_thread=True, agent_name="support-bot")
    graph = build_graph()
    config = {"configurable": {"thread_id": "chat-1"}, "callbacks": [handler]}
    graph.invoke({"messages": [HumanMessage("hi")]}, config)
    paused = handler.waiting_run("chat-1")
    assert paused is not None and paused.sdk_run_id == "chat-1"
    graph.invoke(Command(resume="yes"), config)
    graph.invoke({"messages": [HumanMessage("again")]}, config)  # a second turn: the same run again
    # an explicit id in the config metadata wins
    graph2 = build_graph()
    graph2.invoke(
        {"messages": [HumanMessage("hi")]},
        {
            "configurable": {"thread_id": "chat-2"},
            "metadata": {"runwatch_sdk_run_id": "ticket-42"},
            "callbacks": [CallbackHandler(client)],
        },
    )
    assert client.flush(5)
    runs = by_run(capture)
    assert set(runs) == {"chat-1", "ticket-42"}
    assert summary(runs["chat-1"])[: len(EXPECTED_UNTIL_INTERRUPT + EXPECTED_AFTER_RESUME)] == (
        EXPECTED_UNTIL_INTERRUPT + EXPECTED_AFTER_RESUME
    )
    assert summary(runs["chat-1"]).count("run_start") == 2
    assert runs["chat-1"][0]["agent_name"] == "support-bot"
    assert {e["session_id"] for e in runs["ticket-42"]} == {"chat-2"}


def test_chat_turns_are_runs_of_one_session(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    handler = CallbackHandler(client)
    graph = build_graph()
    config = {"configurable": {"thread_id": "turns-1"}, "callbacks": [handler]}
    graph.invoke({"messages": [HumanMessage("first")]}, config)
    graph.invoke(Command(resume="ok"), config)
    graph.invoke({"messages": [HumanMessage("second")]}, config)  # the next turn: a new run in the session
    assert client.flush(5)
    runs = by_run(capture)
    assert len(runs) == 2
    first, second = runs.values()
    assert summary(first) == EXPECTED_UNTIL_INTERRUPT + EXPECTED_AFTER_RESUME
    assert summary(second)[0] == "run_start" and summary(second).count("run_start") == 1
    assert second[0]["payload"]["input"]["messages"][-1]["content"] == "second"
    assert {e["session_id"] for e in first + second} == {"turns-1"}


def test_handler_inside_a_manual_run_reports_into_it(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    model = GenericFakeChatModel(
        messages=iter(
            [AIMessage(content="hello", usage_metadata={"input_tokens": 7, "output_tokens": 3, "total_tokens": 10})]
        )
    )
    with client.run("wrapper", sdk_run_id="manual-1") as run, run.step("ask-model"):
        model.invoke("hi", config={"callbacks": [CallbackHandler(client)]})
    assert client.flush(5)
    events = by_run(capture)["manual-1"]
    assert summary(events) == [
        "run_start",
        "step:ask-model:start",
        "llm:GenericFakeChatModel:start",
        "llm:GenericFakeChatModel:end",
        "step:ask-model:end",
        "run_end",
    ]
    step_span = events[1]["span_id"]
    assert events[2]["parent_span_id"] == step_span  # the model call nests in the step it was made in
    llm_end = events[3]["payload"]
    assert {k: llm_end[k] for k in ("node_name", "kind", "phase", "output", "prompt_tokens", "completion_tokens")} == {
        "node_name": "GenericFakeChatModel",
        "kind": "llm",
        "phase": "end",
        "output": {"type": "ai", "content": "hello"},
        "prompt_tokens": 7,
        "completion_tokens": 3,
    }
    assert events[-1]["payload"]["prompt_tokens"] == 7
    assert events[-1]["payload"]["completion_tokens"] == 3


def test_a_bare_chat_model_call_is_a_run(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    model = GenericFakeChatModel(
        messages=iter(
            [AIMessage(content="4", usage_metadata={"input_tokens": 5, "output_tokens": 1, "total_tokens": 6})]
        )
    )
    model.invoke("2+2?", config={"callbacks": [CallbackHandler(client, agent_name="calc")]})
    assert client.flush(5)
    (events,) = by_run(capture).values()
    assert summary(events) == ["run_start", "llm:GenericFakeChatModel:start", "llm:GenericFakeChatModel:end", "run_end"]
    assert events[-1]["payload"]["total_tokens"] == 6
    assert events[-1]["payload"]["output"]["content"] == "4"


def test_a_model_call_given_a_prompt_records_its_version(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    model = GenericFakeChatModel(messages=iter([AIMessage(content="4"), AIMessage(content="6")]))
    prompt = Prompt("qa", 3, "Answer {{q}}", {"model": "fake"}, ("production",))
    fallback = Prompt("qa", None, "Answer {{q}}", {}, (), True)
    for p, q in ((prompt, "2+2?"), (fallback, "3+3?")):
        handler = CallbackHandler(client, agent_name="calc")
        model.invoke(p.compile(q=q), config={"callbacks": [handler], "metadata": {"runwatch_prompt": p}})
    assert client.flush(5)
    ends = [
        e["payload"]
        for events in by_run(capture).values()
        for e in events
        if e["payload"].get("kind") == "llm" and e["payload"].get("phase") == "end"
    ]
    recorded = [(e.get("prompt_name"), e.get("prompt_version")) for e in ends]
    assert sorted(recorded, key=lambda r: r[1] or 0) == [(None, None), ("qa", 3)]
    starts = [e for events in by_run(capture).values() for e in events if e["event_type"] == "run_start"]
    assert all("runwatch_prompt" not in (e.get("metadata") or {}) for e in starts)


def test_streamed_chat_model_usage_is_counted(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()

    class StreamingModel(GenericFakeChatModel):
        def _stream(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            from langchain_core.outputs import ChatGenerationChunk

            for word in ["streamed ", "answer"]:
                chunk = ChatGenerationChunk(message=AIMessageChunk(content=word))
                if run_manager:
                    run_manager.on_llm_new_token(word, chunk=chunk)
                yield chunk
            yield ChatGenerationChunk(
                message=AIMessageChunk(
                    content="",
                    usage_metadata={"input_tokens": 11, "output_tokens": 2, "total_tokens": 13},
                    response_metadata={"model_name": "claude-3-5-haiku-latest"},
                )
            )

    model = StreamingModel(messages=iter([]))
    text = "".join(str(c.content) for c in model.stream("hi", config={"callbacks": [CallbackHandler(client)]}))
    assert text == "streamed answer"
    assert client.flush(5)
    (events,) = by_run(capture).values()
    end = events[-1]["payload"]
    assert (end["prompt_tokens"], end["completion_tokens"], end["model"]) == (11, 2, "claude-3-5-haiku-latest")


def test_usage_from_llm_output_token_usage() -> None:
    result = LLMResult(
        generations=[[ChatGeneration(message=AIMessage(content="x"))]],
        llm_output={"token_usage": {"prompt_tokens": 40, "completion_tokens": 9}, "model_name": "gpt-4o"},
    )
    assert usage_from_llm_result(result) == (40, 9, "gpt-4o")


def test_cost_comes_from_genai_prices_when_installed(capture: CaptureServer, make_client: Any) -> None:
    pytest.importorskip("genai_prices")
    client: Runwatch = make_client()
    graph = build_graph()
    config = {"configurable": {"thread_id": "cost-1"}, "callbacks": [CallbackHandler(client)]}
    graph.invoke({"messages": [HumanMessage("hi")]}, config)
    graph.invoke(Command(resume="ok"), config)
    assert client.flush(5)
    end = by_session(capture)["cost-1"][-1]["payload"]
    # gpt-4o-mini: $0.15 / M input, $0.60 / M output → 300 in + 40 out
    assert end["cost_usd"] == pytest.approx(300 * 0.15e-6 + 40 * 0.6e-6)


def test_resume_from_dashboard(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    graph = build_graph()
    config = {"configurable": {"thread_id": "dash-1"}, "callbacks": [CallbackHandler(client)]}
    graph.invoke({"messages": [HumanMessage("hi")]}, config)
    rid = config["callbacks"][0].sdk_run_id_for_thread("dash-1")
    capture.input_answers[f"/api/runs/{rid}/input"] = [
        (204, {}, None),
        (200, {}, {"response": "approved", "responded_by": "dana@example.com", "answered_at": "2026-11-23T10:00:00Z"}),
    ]
    out = resume_from_dashboard(graph, config, timeout=10, poll_wait=1)
    assert out["messages"][-1].content == "review: approved"
    assert client.flush(5)
    events = by_run(capture)[rid]
    assert summary(events) == EXPECTED_UNTIL_INTERRUPT + EXPECTED_AFTER_RESUME
    assert events[16]["payload"] == {"response": "approved", "responded_by": "dana@example.com"}


def test_callback_failures_never_reach_the_graph(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    handler = CallbackHandler(client)
    client._transport.enqueue = None  # type: ignore[assignment]  # any use would raise TypeError
    graph = build_graph()
    config = {"configurable": {"thread_id": "robust-1"}, "callbacks": [handler]}
    out = graph.invoke({"messages": [HumanMessage("hi")]}, config)
    assert "__interrupt__" in out


async def test_ainvoke_concurrent_runs_without_interrupts(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    handler = CallbackHandler(client)
    graph = build_graph_with_subgraph()
    await asyncio.gather(
        *(graph.ainvoke({"messages": [HumanMessage(f"w{i}")]}, {"callbacks": [handler]}) for i in range(5))
    )
    assert client.flush(5)
    runs = by_run(capture)
    assert len(runs) == 5
    for events in runs.values():
        seq = summary(events)
        # Before 3.11 asyncio does not carry the callback context into the graph that the "rewrite" node
        # invokes by hand, so LangChain reports no events for it (the nested writer/* steps are still there).
        assert seq[0] == "run_start" and seq[-1] == "run_end"
        assert len(seq) == (16 if sys.version_info >= (3, 11) else 12), seq
    assert not handler._roots


def test_chat_messages_are_taken_without_rendering_them_on_the_agents_thread() -> None:
    # A LangChain message's str() is slow pydantic repr work (about 0.5 ms): rendering a 200-message conversation on
    # every model call cost the agent 100 ms. The handler takes the lists; the sender thread reads the messages.
    from runwatch._json import Deferred
    from runwatch._langchain_support import messages_of

    class Message:
        type = "human"
        content = "hello"

        def __str__(self) -> str:
            raise AssertionError("str() of a message on the agent's thread")

    batches = [[Message(), Message()]]
    taken = messages_of(batches)
    batches[0].append(Message())  # the agent's list grows afterwards: the event keeps what was sent to the model
    assert isinstance(taken, Deferred)
    assert taken.resolve() == [{"role": "human", "content": "hello"}, {"role": "human", "content": "hello"}]

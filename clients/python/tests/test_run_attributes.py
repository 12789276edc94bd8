"""A run's tags, metadata, end user, environment and release: what the client sends (over a loopback server) from
client.run, run.add_tags / set_metadata, the decorators and the LangGraph handler (a real graph whose model calls the
fake LLM on loopback), and how values beyond the server's bounds are cut."""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any, TypedDict

import pytest

from runwatch import Runwatch

from .capture_server import CaptureServer

INTERNAL_TAG_PREFIXES = ("seq:step:", "graph:step:", "langsmith:")
INTERNAL_KEYS = ("thread_id", "checkpoint_ns", "ls_integration", "langgraph_step", "langgraph_node", "langgraph_path")


def _events(capture: CaptureServer, sdk_run_id: str) -> list[dict[str, Any]]:
    return [e for e in capture.events() if e["sdk_run_id"] == sdk_run_id]


def _attributes(event: dict[str, Any]) -> dict[str, Any]:
    keys = ("tags", "metadata", "end_user", "environment", "release")
    return {k: event[k] for k in keys if k in event}


def test_run_sends_its_attributes_on_run_start_and_later_ones_on_the_next_event(
    capture: CaptureServer, make_client: Any
) -> None:
    client: Runwatch = make_client()
    with client.run(
        "refund-agent",
        input={"q": "refund?"},
        sdk_run_id="attrs-1",
        tags=["vip", "beta", "vip"],
        metadata={"customer": "acme", "tier": 2, "score": 0.5, "trial": False, "plan": {"seats": 3}, "gone": None},
        end_user="cust-42",
        environment="production",
        release="v1.2.3",
    ) as run:
        with run.step("plan"):
            run.add_tags("escalated", "vip")
            run.set_metadata({"tier": 3}, region="eu")
        with run.tool_call("lookup", input="x") as call:
            call.set_output("y")
    assert client.flush(5)
    start, plan_start, plan_end, tool_start, tool_end, end = _events(capture, "attrs-1")
    assert _attributes(start) == {
        "tags": ["vip", "beta"],
        "metadata": {"customer": "acme", "tier": 2, "score": 0.5, "trial": False, "plan": '{"seats": 3}'},
        "end_user": "cust-42",
        "environment": "production",
        "release": "v1.2.3",
    }
    assert _attributes(plan_start) == {}
    # Added inside the step: they go with the next event only, the tag the run has already left out.
    assert _attributes(plan_end) == {"tags": ["escalated"], "metadata": {"tier": 3, "region": "eu"}}
    assert [_attributes(e) for e in (tool_start, tool_end, end)] == [{}, {}, {}]
    assert run.tags == ["vip", "beta", "escalated"]
    assert run.metadata["tier"] == 3 and run.metadata["plan"] == '{"seats": 3}'


def test_a_run_without_attributes_sends_none(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    with client.run("plain", sdk_run_id="attrs-none", tags=[], metadata={}, end_user="") as run:
        run.set_output("ok")
    assert client.flush(5)
    assert [_attributes(e) for e in _events(capture, "attrs-none")] == [{}, {}]


def test_values_beyond_the_servers_bounds_are_cut_with_a_warning(
    capture: CaptureServer, make_client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    client: Runwatch = make_client()
    with caplog.at_level(logging.WARNING, logger="runwatch"):
        with client.run(
            "bounded",
            sdk_run_id="attrs-cut",
            tags=[f"t{i}" for i in range(60)] + ["x" * 250],
            metadata={**{f"k{i}": i for i in range(70)}, "y" * 300: "v"},
            end_user="u" * 300,
            environment="e" * 150,
            release="r" * 300,
        ) as run:
            run.set_metadata(k0="again", late=float("nan"))
            run.add_tags("late")
            run.set_metadata(text="z" * 2000)
    assert client.flush(5)
    start, end = _events(capture, "attrs-cut")
    assert start["tags"] == [f"t{i}" for i in range(50)]  # a run keeps 50 tags, as the server does
    assert list(start["metadata"]) == [f"k{i}" for i in range(64)]  # and 64 keys
    assert (len(start["end_user"]), len(start["environment"]), len(start["release"])) == (200, 100, 200)
    # A known key may change; a new one past 64 is left out; a long value is cut to 1024 characters.
    assert _attributes(end) == {"metadata": {"k0": "again"}}
    text = caplog.text
    assert "run attrs-cut has 50 tags, the most a run keeps; left out: 't50'" in text
    assert "'late'" in text and "has 64 metadata keys" in text
    assert "end_user is 300 characters long; cut to 200" in text

    with client.run("long values", sdk_run_id="attrs-long", tags=["x" * 250]) as run:
        run.set_metadata(text="z" * 2000, bad=float("inf"))
    assert client.flush(5)
    start, end = _events(capture, "attrs-long")
    assert start["tags"] == ["x" * 200]
    assert end["metadata"] == {"text": "z" * 1024, "bad": "inf"}


def test_wrong_kinds_of_values_raise_type_error_naming_the_argument(make_client: Any) -> None:
    client: Runwatch = make_client()
    with pytest.raises(TypeError, match=r"tags\[1\] must be a string, not int"):
        client.run("a", tags=["ok", 42])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="tags must be a list of strings, not int"):
        client.run("a", tags=7)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="metadata must be a mapping of string keys, not list"):
        client.run("a", metadata=[("k", "v")])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="metadata keys must be strings, not int"):
        client.run("a", metadata={1: "v"})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="end_user must be a string, not dict"):
        client.run("a", end_user={"id": 1})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="release must be a string"):
        client.trace_run(release=1.5)  # type: ignore[arg-type]
    run = client.run("a")
    with pytest.raises(TypeError, match=r"tags\[0\] must be a string"):
        run.add_tags(None)  # type: ignore[arg-type]
    assert client.run("a", tags="solo", end_user=1234).tags == ["solo"]  # one string is one tag; an id as digits


def test_decorators_and_client_defaults(
    capture: CaptureServer, make_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNWATCH_ENVIRONMENT", "staging")
    monkeypatch.setenv("RUNWATCH_RELEASE", "build-7")
    client: Runwatch = make_client()

    @client.trace_run(tags=["inner"], metadata={"stage": "retrieve"})
    def retrieve(q: str) -> str:
        return q

    @client.trace_run("answerer", tags="outer", metadata={"customer": "acme"}, end_user="u-1", release="v9")
    def answer(q: str) -> str:
        return retrieve(q)

    assert answer("hi") == "hi"
    assert retrieve("alone") == "alone"
    with client.run("explicit", sdk_run_id="attrs-env", environment="production"):
        pass
    assert client.flush(5)
    starts = capture.events("run_start")
    outer, alone = (e for e in starts if e["agent_name"] in ("answerer", "retrieve"))
    assert _attributes(outer) == {
        "tags": ["outer"],
        "metadata": {"customer": "acme"},
        "end_user": "u-1",
        "environment": "staging",  # the client's (RUNWATCH_ENVIRONMENT); its own release wins
        "release": "v9",
    }
    # Nested, the decorated function is a step of the outer run: its tags and metadata go to that run.
    step_start = next(e for e in capture.events("step") if e["sdk_run_id"] == outer["sdk_run_id"])
    assert _attributes(step_start) == {"tags": ["inner"], "metadata": {"stage": "retrieve"}}
    assert _attributes(alone) == {
        "tags": ["inner"],
        "metadata": {"stage": "retrieve"},
        "environment": "staging",
        "release": "build-7",
    }
    explicit = _events(capture, "attrs-env")[0]
    assert (explicit["environment"], explicit["release"]) == ("production", "build-7")
    other: Runwatch = make_client(environment="qa", release="r1")  # the client's own win over the variables
    with other.run("x", sdk_run_id="attrs-client"):
        pass
    assert other.flush(5)
    assert _attributes(_events(capture, "attrs-client")[0]) == {"environment": "qa", "release": "r1"}


def test_raw_emit_sends_attributes_as_given(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    client.emit("run_start", "attrs-raw", {}, agent_name="raw", attributes={"tags": ["a"], "end_user": "u"})
    assert client.flush(5)
    assert _attributes(_events(capture, "attrs-raw")[0]) == {"tags": ["a"], "end_user": "u"}


# ---- LangGraph: the config's own tags and metadata ------------------------------------------------------------


class Ticket(TypedDict, total=False):
    question: str
    answer: str
    verdict: str


def ticket_graph(llm_url: str, name: str = "refund-graph") -> Any:
    """respond (a chat model over HTTP: the fake LLM) → review (interrupt) → END."""
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    from .fake_llm import HttpChatModel

    model = HttpChatModel(base_url=llm_url)

    def respond(state: Ticket) -> Ticket:
        return {"answer": str(model.invoke([HumanMessage(state["question"])]).content)}

    def review(state: Ticket) -> Ticket:
        return {"verdict": str(interrupt({"question": "Send it?", "draft": state["answer"]}))}

    g = StateGraph(Ticket).add_node("respond", respond).add_node("review", review)
    g = g.add_edge(START, "respond").add_edge("respond", "review").add_edge("review", END)
    return g.compile(checkpointer=InMemorySaver(), name=name)


CONFIG_METADATA = {"customer": "acme", "tier": 2, "beta": True, "limits": {"max": 3}}


def assert_no_internal_attributes(events: list[dict[str, Any]]) -> None:
    for e in events:
        assert not [t for t in e.get("tags", []) if t.startswith(INTERNAL_TAG_PREFIXES)], e
        assert not [k for k in e.get("metadata", {}) if k in INTERNAL_KEYS or k.startswith("runwatch_")], e


def test_langgraph_config_tags_and_metadata_become_the_runs(capture: CaptureServer, make_client: Any) -> None:
    pytest.importorskip("langgraph")
    from langgraph.types import Command

    from runwatch.langchain import CallbackHandler

    from .fake_llm import fake_llm

    client: Runwatch = make_client()
    thread = f"attrs-thread-{uuid.uuid4()}"
    with fake_llm() as llm_url:
        graph = ticket_graph(llm_url)
        handler = CallbackHandler(client)
        config: dict[str, Any] = {
            "configurable": {"thread_id": thread},
            "callbacks": [handler],
            "tags": ["vip", "beta"],
            "metadata": CONFIG_METADATA,
        }
        out = graph.invoke({"question": "Can I get a refund?"}, config)
        assert out["answer"] == "Can I get a refund?" and "__interrupt__" in out
        resume = {**config, "tags": ["vip", "resumed"], "metadata": {"reviewer": "lead"}}
        assert graph.invoke(Command(resume="yes"), resume)["verdict"] == "yes"
    assert client.flush(5)
    events = [e for e in capture.events() if e.get("session_id") == thread]
    assert [e["event_type"] for e in events if e["event_type"] != "step"] == [
        "run_start",
        "human_input_requested",
        "human_input_received",
        "run_end",
    ]
    start = events[0]
    assert start["payload"]["framework"] == "langgraph"
    assert _attributes(start) == {
        "tags": ["vip", "beta"],
        "metadata": {"customer": "acme", "tier": 2, "beta": True, "limits": json.dumps({"max": 3})},
    }
    # The resume's config adds what the run does not have yet, with the resume's first event.
    received = next(e for e in events if e["event_type"] == "human_input_received")
    assert _attributes(received) == {"tags": ["resumed"], "metadata": {"reviewer": "lead"}}
    others = [e for e in events if e is not start and e is not received]
    assert all(_attributes(e) == {} for e in others)  # nodes and model calls add nothing of their own
    assert_no_internal_attributes(events)


def test_langchain_runnable_and_model_roots_take_config_attributes(capture: CaptureServer, make_client: Any) -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.messages import HumanMessage
    from langchain_core.runnables import RunnableLambda

    from runwatch.langchain import CallbackHandler

    from .fake_llm import HttpChatModel, fake_llm

    client: Runwatch = make_client()
    handler = CallbackHandler(client)
    chain = RunnableLambda(lambda x: x + 1) | RunnableLambda(lambda x: x * 2)
    assert chain.invoke(1, {"callbacks": [handler], "tags": ["lcel"], "metadata": {"k": "v"}}) == 4
    with fake_llm() as llm_url:
        model = HttpChatModel(base_url=llm_url)
        model.invoke([HumanMessage("hi")], {"callbacks": [handler], "tags": ["direct"], "metadata": {"n": 1}})
    # Inside client.run(...) the graph reports into that run: the config's tags go to it.
    with client.run("outer", sdk_run_id="attrs-outer"):
        chain.invoke(1, {"callbacks": [handler], "tags": ["inside"]})
    assert client.flush(5)
    starts = capture.events("run_start")
    by_agent = {e["agent_name"]: e for e in starts}
    assert _attributes(by_agent["RunnableSequence"]) == {"tags": ["lcel"], "metadata": {"k": "v"}}
    assert _attributes(by_agent["HttpChatModel"]) == {"tags": ["direct"], "metadata": {"n": 1}}
    outer = _events(capture, "attrs-outer")
    assert _attributes(outer[0]) == {}
    assert _attributes(outer[-1]) == {"tags": ["inside"]}  # run_end: the next event after the chain started
    assert_no_internal_attributes(capture.events())


# ---- against a real server: GET /api/runs/{id} reads back what the client sent --------------------------------


@pytest.mark.integration
def test_the_real_server_keeps_what_the_client_sent(real_server: Any) -> None:
    client = Runwatch(api_key=real_server.api_key, base_url=real_server.base_url, flush_interval=0.05, release="v1.2.3")
    try:
        rid = f"py-attrs-{uuid.uuid4()}"
        with client.run(
            "py-attrs-agent",
            input={"q": "refund?"},
            sdk_run_id=rid,
            # Past the server's bounds on purpose: the client cuts them, so nothing is refused.
            tags=["vip", "beta", *(f"t{i:02d}" for i in range(60))],
            metadata={"customer": "acme", "tier": 2, "score": 0.5, "trial": False, "plan": {"seats": 3}},
            end_user="cust-" + "😀" * 150,
            environment="production",
        ) as run:
            with run.step("plan"):
                run.set_metadata(tier=3, region="eu")
            run.set_output("ok")
        assert client.flush(10)
        body = real_server.wait_run(rid, lambda b: b["run"]["status"] == "success")
        assert client.stats.dropped_rejected == 0
        got = body["run"]
        assert got["tags"] == sorted(["vip", "beta", *(f"t{i:02d}" for i in range(48))])
        assert got["metadata"] == {
            "customer": "acme",
            "tier": 3,
            "score": 0.5,
            "trial": False,
            "plan": '{"seats": 3}',
            "region": "eu",
        }
        assert got["end_user"] == "cust-" + "😀" * 97  # 200 UTF-16 code units, as the server counts
        assert (got["environment"], got["release"]) == ("production", "v1.2.3")
    finally:
        client.shutdown(timeout=5)


@pytest.mark.integration
def test_the_real_server_keeps_a_langgraph_runs_config_tags_and_metadata(real_server: Any) -> None:
    pytest.importorskip("langgraph")
    from langgraph.types import Command

    from runwatch.langchain import CallbackHandler

    from .fake_llm import fake_llm

    client = Runwatch(
        api_key=real_server.api_key, base_url=real_server.base_url, flush_interval=0.05, environment="staging"
    )
    try:
        thread = f"py-attrs-graph-{uuid.uuid4()}"
        handler = CallbackHandler(client)
        with fake_llm() as llm_url:
            graph = ticket_graph(llm_url, name="py-attrs-graph")
            config: dict[str, Any] = {
                "configurable": {"thread_id": thread},
                "callbacks": [handler],
                "tags": ["vip", "beta"],
                "metadata": CONFIG_METADATA,
            }
            graph.invoke({"question": "Can I get a refund?"}, config)
            rid = handler.sdk_run_id_for_thread(thread)
            assert rid is not None
            real_server.wait_run(rid, lambda b: b["run"]["status"] == "waiting_for_input")
            resume = {**config, "tags": ["resumed"], "metadata": {"reviewer": "lead"}}
            graph.invoke(Command(resume="yes"), resume)
        assert client.flush(10)
        body = real_server.wait_run(rid, lambda b: b["run"]["status"] == "success")
        got = body["run"]
        assert got["session_id"] == thread
        assert got["tags"] == ["beta", "resumed", "vip"]
        assert got["metadata"] == {**CONFIG_METADATA, "limits": '{"max": 3}', "reviewer": "lead"}
        assert (got["end_user"], got["environment"], got["release"]) == (None, "staging", None)
        assert got["llm_calls"] == 1  # the model call reached the fake LLM and was reported
        assert client.stats.dropped_rejected == 0
    finally:
        client.shutdown(timeout=5)

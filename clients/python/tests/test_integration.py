"""Against a REAL Runwatch server (`node deploy/bin/runwatch.mjs start`, embedded mode, temp data dir, free ports):
what the client sends is read back through the server's read API (GET /api/runs/{sdk_run_id})."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import pytest

pytest.importorskip("langgraph")

from langchain_core.messages import HumanMessage
from langgraph.types import Command

from runwatch import Runwatch, _pricing
from runwatch.langchain import CallbackHandler

from .conftest import RealServer
from .graphs import (
    REACT_AGENT_USAGE,
    REACT_DRAFT_USAGE,
    REACT_POLISH_USAGE,
    REACT_RESEARCH_USAGE,
    build_graph,
    build_react_graph,
)

pytestmark = pytest.mark.integration


def _steps(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(e["payload"]["node_name"], e["payload"]["phase"]) for e in events if e["event_type"] == "step"]


def _of(events: list[dict[str, Any]], event_type: str) -> list[dict[str, Any]]:
    return [e for e in events if e["event_type"] == event_type]


def test_langgraph_run_with_tool_and_interrupt(real_server: RealServer, client: Runwatch) -> None:
    graph = build_graph(name="py-weather-agent")
    thread = f"py-it-{uuid.uuid4()}"
    config: dict[str, Any] = {"configurable": {"thread_id": thread}, "callbacks": [CallbackHandler(client)]}

    out = graph.invoke({"messages": [HumanMessage("What's the weather in Paris?")]}, config)
    assert "__interrupt__" in out
    assert client.flush(10)
    rid = config["callbacks"][0].sdk_run_id_for_thread(thread)  # one run per invocation, the thread its session
    waiting = real_server.wait_run(rid, lambda b: b["run"]["status"] == "waiting_for_input")
    assert waiting["run"]["agent_name"] == "py-weather-agent"
    assert waiting["run"]["session_id"] == thread

    graph.invoke(Command(resume="yes, send it"), config)
    assert client.flush(10)
    body = real_server.wait_run(
        rid, lambda b: b["run"]["status"] == "success" and any(e["event_type"] == "run_end" for e in b["events"])
    )
    run, events = body["run"], body["events"]

    types = [e["event_type"] for e in events]
    assert types[0] == "run_start" and types[-1] == "run_end", types  # stored in the order they happened
    assert _of(events, "run_start")[0]["payload"]["framework"] == "langgraph"
    steps = _steps(events)
    for node in ("agent", "tools", "review"):
        assert (node, "start") in steps and (node, "end") in steps, steps
    assert steps.count(("agent", "end")) == 2
    tools = _of(events, "tool_call")
    assert [(t["payload"]["tool_name"], t["payload"]["phase"]) for t in tools] == [
        ("get_weather", "start"),
        ("get_weather", "end"),
    ]
    assert tools[0]["payload"]["input_preview"] == '{"city": "Paris"}'
    assert tools[1]["payload"]["output_preview"] == "It is sunny and 21°C in Paris."
    asked = _of(events, "human_input_requested")
    assert len(asked) == 1 and asked[0]["payload"]["question"] == "Send this answer to the customer?"
    got = _of(events, "human_input_received")
    assert len(got) == 1 and got[0]["payload"]["response"] == "yes, send it"
    end = _of(events, "run_end")
    assert len(end) == 1
    assert end[0]["payload"]["prompt_tokens"] == 300 and end[0]["payload"]["completion_tokens"] == 40
    assert len(events) == len({e["event_id"] for e in events})

    assert run["status"] == "success"
    assert (run["prompt_tokens"], run["completion_tokens"], run["total_tokens"]) == (300, 40, 340)
    assert run["model"] == "gpt-4o-mini"
    assert run["error_count"] == 0
    # The run's tokens are the sum of its two LLM calls (the totals rule), and its spans nest as the graph ran.
    assert run["llm_calls"] == 2
    status, body = real_server.get(f"/api/runs/{rid}/spans")
    assert status == 200
    spans = {s["span_id"]: s for s in body["spans"]}
    llms = [s for s in body["spans"] if s["kind"] == "llm"]
    assert [(s["model"], s["status"]) for s in llms] == [("gpt-4o-mini", "ok"), ("gpt-4o-mini", "ok")]
    assert all(spans[s["parent_span_id"]]["name"] == "agent" for s in llms)
    (tool,) = [s for s in body["spans"] if s["kind"] == "tool"]
    assert spans[tool["parent_span_id"]]["name"] == "tools"
    assert sum(s["prompt_tokens"] for s in llms) == 300


def test_failing_node_ends_in_error_with_traceback(real_server: RealServer, client: Runwatch) -> None:
    graph = build_graph(fail_in="agent", name="py-failing-agent")
    thread = f"py-err-{uuid.uuid4()}"
    with pytest.raises(RuntimeError):
        graph.invoke(
            {"messages": [HumanMessage("hi")]},
            {"configurable": {"thread_id": thread}, "callbacks": [CallbackHandler(client)]},
        )
    assert client.flush(10)
    (rid,) = real_server.session_runs(thread, 1)
    body = real_server.wait_run(rid, lambda b: b["run"]["status"] == "error")
    err = _of(body["events"], "error")
    assert len(err) == 1
    assert err[0]["payload"]["error_type"] == "RuntimeError"
    assert err[0]["payload"]["error_message"] == "the model endpoint exploded"
    assert "Traceback (most recent call last)" in err[0]["payload"]["traceback"]
    assert ("agent", "start") in _steps(body["events"])
    assert body["run"]["error_count"] >= 1


def test_manual_api_and_per_item_rejection(real_server: RealServer, client: Runwatch) -> None:
    rid = f"py-manual-{uuid.uuid4()}"
    with client.run("py-manual-agent", input={"q": "2+2"}, sdk_run_id=rid, framework="custom") as run:
        with run.step("think") as step:
            step.set_output({"plan": "add"})
        with run.tool_call("calculator", input="2+2") as call:
            call.set_output("4")
        # an invalid event in the same batch: the server rejects that item (422) and keeps the others
        client.emit("step", rid, {"node_name": "", "phase": "start"})
        run.set_usage(prompt_tokens=10, completion_tokens=2, model="gpt-4o")
        run.set_output("4")
    assert client.flush(10)
    body = real_server.wait_run(rid, lambda b: b["run"]["status"] == "success")
    assert [e["event_type"] for e in body["events"]] == [
        "run_start",
        "step",
        "step",
        "tool_call",
        "tool_call",
        "run_end",
    ]
    assert client.stats.dropped_rejected == 1
    assert body["run"]["total_tokens"] == 12
    assert body["run"]["cost_usd"] == pytest.approx(10 * 2.5e-6 + 2 * 10e-6)  # gpt-4o
    assert body["run"]["cost_source"] == ("client" if _pricing.available() else "computed")


def test_without_genai_prices_the_server_prices_the_run(
    real_server: RealServer, client: Runwatch, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_pricing, "_calc_price", None)
    rid = f"py-cost-{uuid.uuid4()}"
    with client.run("py-cost-agent", sdk_run_id=rid) as run:
        run.set_usage(prompt_tokens=1000, completion_tokens=100, model="gpt-4o-mini")
    assert client.flush(10)
    body = real_server.wait_run(rid, lambda b: b["run"]["status"] == "success")
    assert "cost_usd" not in _of(body["events"], "run_end")[0]["payload"]
    assert body["run"]["cost_source"] == "computed"
    assert body["run"]["cost_usd"] == pytest.approx(1000 * 0.15e-6 + 100 * 0.6e-6)


def _input_route_missing(real_server: RealServer) -> bool:
    status, body = real_server.get(f"/api/runs/py-probe-{uuid.uuid4()}/input")
    msg = (body or {}).get("error", {}).get("message", "") if isinstance(body, dict) else str(body)
    return status == 404 and "no route" in msg


def test_request_human_input_long_polls_the_real_server(real_server: RealServer, client: Runwatch) -> None:
    if _input_route_missing(real_server):
        pytest.skip("the server has no GET /api/runs/{sdk_run_id}/input route yet (answers 404 'no route')")
    rid = f"py-hitl-{uuid.uuid4()}"
    result: dict[str, Any] = {}

    def agent() -> None:
        try:
            with client.run("py-hitl-agent", sdk_run_id=rid) as run:
                result["answer"] = run.request_human_input(
                    "Deploy to production?", context={"version": "1.2.3"}, timeout=90, poll_wait=5
                )
        except BaseException as e:
            result["error"] = e

    t = threading.Thread(target=agent, daemon=True)
    t.start()
    real_server.wait_run(rid, lambda b: b["run"]["status"] == "waiting_for_input")
    # The dashboard's answer: the API route that records an answer for a waiting run.
    status, resp = real_server.post(
        f"/api/runs/{rid}/input", {"response": "yes, deploy", "responded_by": "pytest@runwatch.test"}
    )
    if status in (404, 405):
        t.join(timeout=0.1)
        pytest.skip(f"no API route to answer a human-input request yet (POST answered {status}: {resp})")
    assert status < 300, (status, resp)
    t.join(timeout=60)
    assert not t.is_alive()
    assert "error" not in result, result.get("error")
    assert result["answer"] == "yes, deploy"
    assert client.flush(10)
    body = real_server.wait_run(rid, lambda b: b["run"]["status"] == "success")
    got = _of(body["events"], "human_input_received")
    assert got and got[-1]["payload"]["response"] == "yes, deploy"


def test_langgraph_resume_from_dashboard_answer(real_server: RealServer, client: Runwatch) -> None:
    if _input_route_missing(real_server):
        pytest.skip("the server has no GET /api/runs/{sdk_run_id}/input route yet (answers 404 'no route')")
    from runwatch.langgraph import resume_from_dashboard

    graph = build_graph(name="py-dashboard-agent")
    thread = f"py-dash-{uuid.uuid4()}"
    config: dict[str, Any] = {"configurable": {"thread_id": thread}, "callbacks": [CallbackHandler(client)]}
    graph.invoke({"messages": [HumanMessage("What's the weather in Paris?")]}, config)
    assert client.flush(10)
    rid = config["callbacks"][0].sdk_run_id_for_thread(thread)
    waiting = real_server.wait_run(rid, lambda b: b["run"]["status"] == "waiting_for_input")
    assert waiting["run"]["pending_question"] == "Send this answer to the customer?"

    def answer_later() -> None:
        time.sleep(1.0)  # the graph is already long-polling when the answer comes
        real_server.post(f"/api/runs/{rid}/input", {"response": "approved", "responded_by": "lead@example.com"})

    threading.Thread(target=answer_later, daemon=True).start()
    out = resume_from_dashboard(graph, config, timeout=60, poll_wait=10)
    assert out["messages"][-1].content == "review: approved"
    assert client.flush(10)
    body = real_server.wait_run(rid, lambda b: b["run"]["status"] == "success")
    got = _of(body["events"], "human_input_received")
    assert [g["payload"] for g in got] == [{"response": "approved", "responded_by": "lead@example.com"}]
    assert body["run"]["total_tokens"] == 340


def test_react_graph_resumed_by_a_new_handler_nests_spans_and_sums_every_call(
    real_server: RealServer, client: Runwatch
) -> None:
    """Two models, a tool under its node, three parallel Send branches, a subgraph, an interrupt resumed by a NEW
    handler with a NEW client (as another request would): the server names the paused run, whose tokens are the sum
    of all calls."""
    graph = build_react_graph()
    thread = f"py-react-{uuid.uuid4()}"
    handler = CallbackHandler(client)
    first = graph.invoke(
        {"messages": [HumanMessage("Plan a trip to Lisbon")]},
        {"configurable": {"thread_id": thread}, "callbacks": [handler]},
    )
    assert "__interrupt__" in first
    assert client.flush(10)
    rid = handler.sdk_run_id_for_thread(thread)
    real_server.wait_run(rid, lambda b: b["run"]["status"] == "waiting_for_input")
    other = Runwatch(api_key=real_server.api_key, base_url=real_server.base_url, flush_interval=0.05)
    resumer = CallbackHandler(other)
    assert resumer.sdk_run_id_for_thread(thread) is None and resumer.find_waiting_run(thread) == rid
    graph.invoke(Command(resume="yes"), {"configurable": {"thread_id": thread}, "callbacks": [resumer]})
    assert other.shutdown(timeout=10)
    body = real_server.wait_run(rid, lambda b: b["run"]["status"] == "success" and b["run"]["llm_calls"] == 7)
    assert real_server.session_runs(thread, 1) == [rid]  # the resume made no run of its own
    usage = REACT_AGENT_USAGE + [REACT_RESEARCH_USAGE] * 3 + [REACT_DRAFT_USAGE, REACT_POLISH_USAGE]
    run = body["run"]
    assert (run["prompt_tokens"], run["completion_tokens"]) == (sum(u[0] for u in usage), sum(u[1] for u in usage))

    status, spans_body = real_server.get(f"/api/runs/{rid}/spans")
    assert status == 200
    spans = spans_body["spans"]
    by_id = {s["span_id"]: s for s in spans}
    parent_name = lambda s: by_id[s["parent_span_id"]]["name"] if s["parent_span_id"] else None  # noqa: E731
    llms = [s for s in spans if s["kind"] == "llm"]
    assert sorted((parent_name(s), s["model"]) for s in llms) == sorted(
        [("agent", "gpt-4o"), ("agent", "gpt-4o")]
        + [("research", "claude-3-5-haiku")] * 3
        + [("writer/draft", "claude-3-5-haiku"), ("review", "gpt-4o")]
    )
    research = [s for s in spans if s["name"] == "research"]
    assert len(research) == 3 and len({s["span_id"] for s in research}) == 3  # three parallel branches, apart
    (tool,) = [s for s in spans if s["kind"] == "tool"]
    assert parent_name(tool) == "tools"
    (draft,) = [s for s in spans if s["name"] == "writer/draft"]
    assert parent_name(draft) == "writer"  # the subgraph's node nests in the node that runs the subgraph

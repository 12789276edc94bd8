"""The framework-agnostic API (runs, steps, tool calls, decorators, human input) over a loopback server."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from typing import Any

import pytest

import runwatch
from runwatch import HumanInputTimeout, Runwatch, RunwatchError, current_run

from .capture_server import CaptureServer


def _types(capture: CaptureServer) -> list[str]:
    return [e["event_type"] for e in capture.events()]


def test_run_context_manager_sends_the_lifecycle(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    with client.run(agent_name="triage", input={"ticket": 7}, framework="custom") as run:
        assert current_run() is run
        with run.step("classify") as step:
            time.sleep(0.02)
            step.set_output({"label": "bug"})
        with run.tool_call("search", input={"q": "crash"}) as call:
            call.set_output("3 results")
        run.set_usage(prompt_tokens=120, completion_tokens=30, model="gpt-4o-mini", cost_usd=0.001)
        run.set_output({"answer": "done"})
    assert current_run() is None
    assert client.flush(5)
    ev = capture.events()
    assert _types(capture) == ["run_start", "step", "step", "tool_call", "tool_call", "run_end"]
    assert {e["sdk_run_id"] for e in ev} == {run.sdk_run_id}
    assert uuid.UUID(run.sdk_run_id).version == 4
    assert all(e["agent_name"] == "triage" for e in ev)
    assert ev[0]["payload"] == {"framework": "custom", "input": {"ticket": 7}}
    assert ev[1]["payload"] == {"node_name": "classify", "phase": "start"}
    assert ev[2]["payload"]["phase"] == "end" and ev[2]["payload"]["duration_ms"] >= 20
    assert ev[2]["payload"]["output"] == {"label": "bug"}
    assert ev[3]["payload"] == {"tool_name": "search", "phase": "start", "input_preview": '{"q": "crash"}'}
    assert ev[4]["payload"]["output_preview"] == "3 results"
    assert ev[5]["payload"] == {
        "prompt_tokens": 120,
        "completion_tokens": 30,
        "total_tokens": 150,
        "model": "gpt-4o-mini",
        "cost_usd": 0.001,
        "output": {"answer": "done"},
    }
    # occurred_at follows the order of the calls
    times = [e["occurred_at"] for e in ev]
    assert times == sorted(times)


def test_spans_nest_by_context_and_llm_calls_carry_their_own_usage(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    with client.run("planner", sdk_run_id="spans-1") as run:
        with run.step("plan") as plan:
            with run.llm_call(
                "chat", model="gpt-4o", provider="openai", input=[{"role": "user", "content": "hi"}]
            ) as call:
                call.set_output("hello")
                call.set_usage(prompt_tokens=12, completion_tokens=3, cached_tokens=8, reasoning_tokens=1)
            with run.tool_call("search", input="q") as tool:
                tool.set_output("r")
        with run.llm_call("summarize", model="claude-sonnet-4-5", provider="anthropic") as second:
            second.set_usage(prompt_tokens=20, completion_tokens=5, cost_usd=0.001)
    assert client.flush(5)
    events = [e for e in capture.events() if e["sdk_run_id"] == "spans-1"]
    spans = {e["span_id"] for e in events if e["event_type"] in ("step", "tool_call")}
    assert len(spans) == 4  # plan, chat, search, summarize: start and end of each share an id
    chat_end = next(e for e in events if e["payload"].get("node_name") == "chat" and e["payload"]["phase"] == "end")
    assert chat_end["parent_span_id"] == plan.span_id
    assert chat_end["payload"] | {"duration_ms": 0} == {
        "node_name": "chat",
        "kind": "llm",
        "model": "gpt-4o",
        "provider": "openai",
        "phase": "end",
        "duration_ms": 0,
        "output": "hello",
        "prompt_tokens": 12,
        "completion_tokens": 3,
        "cached_tokens": 8,
        "reasoning_tokens": 1,
    }
    chat_start = next(e for e in events if e["payload"].get("node_name") == "chat" and e["payload"]["phase"] == "start")
    assert chat_start["payload"]["input"] == [{"role": "user", "content": "hi"}]
    assert next(e for e in events if e["event_type"] == "tool_call")["parent_span_id"] == plan.span_id
    summarize_end = next(
        e for e in events if e["payload"].get("node_name") == "summarize" and e["payload"]["phase"] == "end"
    )
    assert "parent_span_id" not in summarize_end  # at the top of the run
    assert summarize_end["payload"]["cost_usd"] == 0.001
    assert second.span_id == summarize_end["span_id"]


def test_exception_sends_error_with_traceback_and_is_reraised(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    with pytest.raises(ValueError, match="bad input"), client.run("a", sdk_run_id="run-err-1") as run:
        with run.step("parse"):
            raise ValueError("bad input")
    assert client.flush(5)
    assert _types(capture) == ["run_start", "step", "step", "error"]
    step_end = capture.events()[2]["payload"]
    assert step_end["error"] == "ValueError: bad input"
    err = capture.events("error")[0]
    assert err["sdk_run_id"] == "run-err-1"
    assert err["payload"]["error_type"] == "ValueError"
    assert err["payload"]["error_message"] == "bad input"
    assert "Traceback (most recent call last)" in err["payload"]["traceback"]
    assert 'raise ValueError("bad input")' in err["payload"]["traceback"]


def test_explicit_start_and_end(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    run = client.run("a", input="hi").start()
    call = run.tool_call("calc", input="2+2").start()
    call.end("4")
    run.end(output="bye")
    run.end(output="twice")  # idempotent
    assert client.flush(5)
    assert _types(capture) == ["run_start", "tool_call", "tool_call", "run_end"]
    assert capture.events("run_end")[0]["payload"] == {"output": "bye"}


def test_previews_are_truncated_to_500_chars(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    with client.run("a") as run, run.tool_call("t", input="x" * 2000) as call:
        call.set_output({"big": "y" * 2000})
    assert client.flush(5)
    start, end = capture.events("tool_call")
    assert len(start["payload"]["input_preview"]) == 500
    assert len(end["payload"]["output_preview"]) == 500


def test_decorators_sync(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()

    @client.tool
    def search(query: str, limit: int = 3) -> list[str]:
        return [query] * limit

    @client.tool(name="lookup-db")
    def lookup(key: str) -> str:
        raise KeyError(key)

    @client.trace_run(agent_name="helper")
    def summarise(text: str) -> str:
        return text.upper()

    @client.trace_run(agent_name="researcher")
    def research(topic: str) -> str:
        hits = search(topic, limit=2)
        try:
            lookup("missing")
        except KeyError:
            pass
        return summarise(",".join(hits))  # nested trace_run → a step of this run

    assert search("outside") == ["outside"] * 3  # no run: a plain call, nothing sent
    assert research("llm") == "LLM,LLM"
    assert client.flush(5)
    ev = capture.events()
    assert _types(capture) == [
        "run_start",
        "tool_call",
        "tool_call",
        "tool_call",
        "tool_call",
        "step",
        "step",
        "run_end",
    ]
    assert ev[0]["agent_name"] == "researcher" and ev[0]["payload"]["input"] == {"topic": "llm"}
    assert ev[1]["payload"]["input_preview"] == '{"query": "llm", "limit": 2}'
    assert ev[2]["payload"]["output_preview"] == '["llm", "llm"]'
    assert ev[3]["payload"]["tool_name"] == "lookup-db"
    assert ev[4]["payload"]["error"] == "KeyError: 'missing'"
    assert ev[5]["payload"] == {"node_name": "helper", "phase": "start", "input": {"text": "llm,llm"}}
    assert ev[6]["payload"]["output"] == "LLM,LLM"
    assert ev[7]["payload"]["output"] == "LLM,LLM"


async def test_decorators_and_context_managers_async(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()

    @client.tool
    async def fetch(url: str) -> str:
        await asyncio.sleep(0.01)
        return f"<html>{url}</html>"

    @client.trace_run(agent_name="crawler")
    async def crawl(urls: list[str]) -> int:
        pages = await asyncio.gather(*(fetch(u) for u in urls))
        return len(pages)

    # two concurrent runs in one event loop: the contextvar keeps their tool calls apart
    assert await asyncio.gather(crawl(["a", "b"]), crawl(["c"])) == [2, 1]

    async with client.run("manual") as run:
        async with run.step("think"):
            await asyncio.sleep(0)
    assert client.flush(5)
    ev = capture.events()
    runs: dict[str, list[str]] = {}
    for e in ev:
        runs.setdefault(e["sdk_run_id"], []).append(e["event_type"])
    assert sorted(len(v) for v in runs.values()) == [4, 4, 6]
    for seq in runs.values():
        assert seq[0] == "run_start" and seq[-1] == "run_end"


def test_threads_get_their_own_current_run(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()

    @client.tool
    def work(n: int) -> int:
        return n * 2

    def agent(i: int) -> None:
        with client.run("threaded", sdk_run_id=f"t-{i}"):
            for _ in range(5):
                work(i)

    threads = [threading.Thread(target=agent, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert client.flush(5)
    for i in range(8):
        evs = [e for e in capture.events() if e["sdk_run_id"] == f"t-{i}"]
        assert len(evs) == 12
        assert {e["payload"].get("input_preview") for e in evs if e["payload"].get("phase") == "start"} == {
            f'{{"n": {i}}}'
        }


def test_request_human_input_long_polls_until_answered(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    path = "/api/runs/hitl-1/input"
    capture.input_answers[path] = [
        (404, {}, {"error": {"code": "not_found", "message": "run not found"}}),  # not ingested yet
        (204, {}, None),
        (200, {}, {"response": "approve", "responded_by": "alice@example.com", "answered_at": "2026-11-23T10:00:00Z"}),
    ]
    with client.run("approver", sdk_run_id="hitl-1") as run:
        answer = run.request_human_input(
            "Ship it?", context={"diff": "+1 -1"}, channel="dashboard", timeout=20, poll_wait=1
        )
    assert answer == "approve"
    assert client.flush(5)
    assert _types(capture) == ["run_start", "human_input_requested", "human_input_received", "run_end"]
    req, rec = capture.events()[1:3]
    assert req["payload"] == {"question": "Ship it?", "context": {"diff": "+1 -1"}, "channel": "dashboard"}
    assert rec["payload"] == {"response": "approve", "responded_by": "alice@example.com"}
    assert all("wait=1" in p for p in capture.input_requests)


def test_a_second_question_never_gets_the_first_answer(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    path = "/api/runs/hitl-2/input"
    first = (200, {}, {"response": "one", "responded_by": "bob", "answered_at": "2026-11-23T10:00:00Z"})
    second = (200, {}, {"response": "two", "responded_by": "bob", "answered_at": "2026-11-23T10:05:00Z"})
    capture.input_answers[path] = [first, first, second]
    with client.run("a", sdk_run_id="hitl-2") as run:
        assert run.request_human_input("first?", timeout=10, poll_wait=1) == "one"
        assert run.request_human_input("second?", timeout=10, poll_wait=1) == "two"


def test_request_human_input_times_out(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    capture.input_answers["/api/runs/hitl-3/input"] = [(204, {}, None)] * 50
    run = client.run("a", sdk_run_id="hitl-3").start()
    t0 = time.monotonic()
    with pytest.raises(HumanInputTimeout):
        run.request_human_input("anyone?", timeout=1.5, poll_wait=1)
    assert 1.4 <= time.monotonic() - t0 < 5


def test_refused_key_on_input_raises(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    capture.input_answers["/api/runs/hitl-4/input"] = [(401, {}, {"error": {"code": "unauthorized", "message": "no"}})]
    with pytest.raises(RunwatchError, match="401"):
        client.wait_for_input("hitl-4", timeout=5, poll_wait=1)


async def test_arequest_human_input(capture: CaptureServer, make_client: Any) -> None:
    client: Runwatch = make_client()
    capture.input_answers["/api/runs/hitl-5/input"] = [(200, {}, {"response": "ok", "responded_by": "carol"})]
    async with client.run("a", sdk_run_id="hitl-5") as run:
        assert await run.arequest_human_input("go?", timeout=5, poll_wait=1) == "ok"


def test_default_client_and_package_exports(monkeypatch: pytest.MonkeyPatch, capture: CaptureServer) -> None:
    monkeypatch.setenv("RUNWATCH_API_KEY", "12" * 32)
    monkeypatch.setenv("RUNWATCH_BASE_URL", capture.url)
    monkeypatch.setattr(runwatch.client, "_default_client", None)
    c = runwatch.get_client()
    assert c is runwatch.get_client()
    assert c.base_url == capture.url
    c.shutdown(1)


async def test_async_step_decorator_and_debug_logging(
    capture: CaptureServer, make_client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    client: Runwatch = make_client(debug=True)

    @client.step("summarise")
    async def summarise(text: str) -> str:
        await asyncio.sleep(0)
        return text[:3]

    assert await summarise("outside a run") == "out"
    async with client.run("a", sdk_run_id="async-step"):
        assert await summarise("inside") == "ins"
    assert client.flush(5)
    assert [e["payload"].get("phase") for e in capture.events("step")] == ["start", "end"]
    assert capture.events("step")[1]["payload"]["output"] == "ins"


def test_values_are_sent_as_they_were_when_recorded_though_converted_on_the_sender_thread(
    capture: CaptureServer, make_client: Any
) -> None:
    # Inputs and outputs are made JSON-ready on the sender thread (runwatch._json.deferred_jsonable): what the
    # agent's thread takes is a snapshot, so changes the agent makes afterwards do not reach the event.
    client: Runwatch = make_client()
    state = {"messages": ["hello"], "step": 1}
    items = ["a", "b"]
    with client.run("a") as run:
        with run.step("plan", input=state) as step:
            state["messages"].append("changed after the start")
            state["step"] = 2
            step.set_output(items)
        items.append("changed after the end")
        with run.tool_call("t", input=state) as call:
            call.set_output({"ok": True})
        state["messages"].append("changed after the tool's start")
    assert client.flush(5)
    step_start, step_end = capture.events("step")
    assert step_start["payload"]["input"] == {"messages": ["hello"], "step": 1}
    assert step_end["payload"]["output"] == ["a", "b"]
    tool_start = capture.events("tool_call")[0]
    assert "changed after the tool's start" not in tool_start["payload"]["input_preview"]

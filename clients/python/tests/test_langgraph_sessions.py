"""LangGraph threads as sessions against a REAL Runwatch server: each invocation is a run in the thread's session, and
an interrupted invocation resumed in ANOTHER PROCESS (same SQLite checkpoint, a fresh handler and client) continues
that same run — the other process learns which run from the server."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph.checkpoint.sqlite")

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from runwatch import Runwatch
from runwatch.langchain import CallbackHandler

from .conftest import RealServer
from .graphs import build_graph

pytestmark = pytest.mark.integration

CLIENT_DIR = Path(__file__).resolve().parent.parent


def test_interrupted_invocation_resumed_in_another_process_continues_its_run(
    real_server: RealServer, tmp_path: Path
) -> None:
    db = tmp_path / "checkpoints.sqlite"
    thread = f"py-session-{uuid.uuid4()}"
    client = Runwatch(api_key=real_server.api_key, base_url=real_server.base_url, flush_interval=0.05)
    conn = sqlite3.connect(db, check_same_thread=False)
    try:
        graph = build_graph(name="py-session-agent", checkpointer=SqliteSaver(conn))
        handler = CallbackHandler(client)
        out = graph.invoke(
            {"messages": [HumanMessage("What's the weather in Paris?")]},
            {"configurable": {"thread_id": thread}, "callbacks": [handler]},
        )
        assert "__interrupt__" in out
        assert client.flush(10)
    finally:
        conn.close()
        client.shutdown(timeout=5)
    rid = handler.sdk_run_id_for_thread(thread)
    assert rid and rid != thread
    real_server.wait_run(rid, lambda b: b["run"]["status"] == "waiting_for_input")

    env = {**os.environ, "RUNWATCH_API_KEY": real_server.api_key, "RUNWATCH_BASE_URL": real_server.base_url}
    worker = subprocess.Popen(
        [sys.executable, "-m", "tests.langgraph_worker", str(db), thread],
        cwd=CLIENT_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.extend(worker.stdout or []), daemon=True)
    reader.start()
    time.sleep(1.0)  # the worker is finding the paused run and long-polling its input
    status, _ = real_server.post(f"/api/runs/{rid}/input", {"response": "approved", "responded_by": "lead@example.com"})
    assert status in (200, 201, 202), status
    assert worker.wait(timeout=90) == 0, "".join(output)
    reader.join(5)
    assert "resumed: review: approved" in "".join(output), "".join(output)

    body = real_server.wait_run(rid, lambda b: b["run"]["status"] == "success")
    types = [e["event_type"] for e in body["events"]]
    assert types.count("run_start") == 1 and types[-1] == "run_end"
    received = [e["payload"] for e in body["events"] if e["event_type"] == "human_input_received"]
    assert received == [{"response": "approved", "responded_by": "lead@example.com"}]
    assert body["run"]["total_tokens"] == 340  # the calls before the interrupt and after it, one run

    runs = real_server.session_runs(thread, 2)
    assert runs[0] == rid and len(runs) == 2  # the next turn is a run of its own in the session
    nxt = real_server.wait_run(runs[1], lambda b: b["run"]["status"] == "waiting_for_input")
    start = next(e for e in nxt["events"] if e["event_type"] == "run_start")
    assert start["payload"]["input"]["messages"][-1]["content"] == "And tomorrow?"
    status, session = real_server.get(f"/api/sessions/{thread}")
    assert status == 200 and session["session"]["run_count"] == 2


def test_a_new_turn_while_an_interrupt_is_unanswered_is_a_run_of_its_own(real_server: RealServer) -> None:
    client = Runwatch(api_key=real_server.api_key, base_url=real_server.base_url, flush_interval=0.05)
    thread = f"py-session-{uuid.uuid4()}"
    config: dict[str, Any] = {"configurable": {"thread_id": thread}, "callbacks": [CallbackHandler(client)]}
    try:
        graph = build_graph(name="py-session-agent")
        graph.invoke({"messages": [HumanMessage("first")]}, config)
        time.sleep(0.01)
        graph.invoke({"messages": [HumanMessage("second")]}, config)
        assert client.flush(10)
    finally:
        client.shutdown(timeout=5)
    runs = real_server.session_runs(thread, 2)
    assert len(set(runs)) == 2

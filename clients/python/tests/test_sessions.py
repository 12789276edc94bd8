"""Sessions against a REAL Runwatch server: runs started with session_id group into that session."""

from __future__ import annotations

import time
import uuid

import pytest

from runwatch import Runwatch

from .conftest import RealServer

pytestmark = pytest.mark.integration


def test_runs_with_a_session_id_group_into_that_session(real_server: RealServer) -> None:
    client = Runwatch(api_key=real_server.api_key, base_url=real_server.base_url, flush_interval=0.05)
    session = f"py-thread-{uuid.uuid4()}"
    try:
        with client.run("py-chat", input={"message": "hi"}, session_id=session) as first:
            first.set_output("hello")
        time.sleep(0.005)  # the next turn starts later (runs of the same millisecond sort by id)
        with client.run("py-chat", input={"message": "bye"}, session_id=session) as second:
            second.set_output("see you")
        assert client.flush(10)
    finally:
        client.shutdown(timeout=5)
    deadline = time.monotonic() + 30
    body: dict = {}
    while time.monotonic() < deadline:
        status, body = real_server.get(f"/api/sessions/{session}")
        if status == 200 and len(body["runs"]) == 2:
            break
        time.sleep(0.2)
    assert [(r["sdk_run_id"], r["session_id"]) for r in body["runs"]] == [
        (first.sdk_run_id, session),
        (second.sdk_run_id, session),
    ]
    assert body["session"]["run_count"] == 2

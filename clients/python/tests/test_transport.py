"""The background transport against a real HTTP server on loopback (tests/capture_server.py)."""

from __future__ import annotations

import itertools
import logging
import os
import time
import uuid
from typing import Any

import pytest

from runwatch import Runwatch

from .capture_server import CaptureServer, accept_all
from .conftest import free_port


def _emit_n(client: Runwatch, n: int, run_id: str = "r1") -> None:
    for i in range(n):
        client.emit("step", run_id, {"node_name": f"n{i}", "phase": "start"})


def test_events_are_batched_and_carry_idempotency_ids(capture: CaptureServer, make_client: Any) -> None:
    client = make_client(flush_interval=0.05)
    _emit_n(client, 2500)
    assert client.flush(10)
    events = capture.events()
    assert len(events) == 2500
    assert all(len(batch) <= 1000 for batch in capture.requests)
    assert len(capture.requests) <= 5  # batched, not one request per event
    ids = [e["event_id"] for e in events]
    assert len(set(ids)) == 2500
    assert all(uuid.UUID(i).version == 7 for i in ids)
    assert ids == sorted(ids)  # UUIDv7: the server orders a run's events by event_id
    assert [e["payload"]["node_name"] for e in events] == [f"n{i}" for i in range(2500)]  # order kept
    assert all(e["occurred_at"].endswith("Z") for e in events)
    assert capture.auth_headers[0] == "Bearer " + "ab" * 32
    assert client.stats.sent == 2500 and client.stats.dropped == 0


def test_batches_respect_the_byte_limit(capture: CaptureServer, make_client: Any) -> None:
    client = make_client()
    client._transport.max_batch_bytes = 20_000
    for i in range(50):
        client.emit("step", "r", {"node_name": "n", "phase": "end", "output": "x" * 1000, "i": i})
    assert client.flush(10)
    assert len(capture.events()) == 50
    assert len(capture.requests) >= 3


def test_5xx_is_retried_with_the_same_event_ids(capture: CaptureServer, make_client: Any) -> None:
    capture.responses = [lambda ev: (503, {}, {"error": {"code": "unavailable", "message": "busy"}})] * 2
    client = make_client()
    client._transport.backoff_base = 0.01
    _emit_n(client, 3)
    assert client.flush(10)
    assert len(capture.requests) == 3
    first, last = capture.requests[0], capture.requests[-1]
    assert [e["event_id"] for e in first] == [e["event_id"] for e in last]
    assert len(capture.events()) == 3
    assert client.stats.retries == 2


def test_429_retry_after_is_honoured(capture: CaptureServer, make_client: Any) -> None:
    capture.responses = [lambda ev: (429, {"Retry-After": "1"}, {"error": {"code": "rate_limited", "message": "slow"}})]
    client = make_client()
    client._transport.backoff_base = 0.001  # would retry at once if Retry-After were ignored
    t0 = time.monotonic()
    _emit_n(client, 1)
    assert client.flush(10)
    elapsed = time.monotonic() - t0
    assert len(capture.requests) == 2
    assert elapsed >= 0.95, elapsed
    assert len(capture.events()) == 1


def test_requests_spread_over_the_rate_limit_window_once_half_is_spent(
    capture: CaptureServer, make_client: Any
) -> None:
    remaining = [10]

    def limited(events: list[dict[str, Any]]) -> Any:
        status, _, body = accept_all(events)
        remaining[0] -= 1
        headers = {"RateLimit-Limit": "10", "RateLimit-Remaining": str(remaining[0]), "RateLimit-Reset": "2"}
        return status, headers, body

    capture.default = limited
    client = make_client(flush_interval=0.01)
    sent_at = []
    for i in range(8):
        client.emit("step", "r1", {"node_name": f"n{i}", "phase": "start"})
        assert client.flush(10)
        sent_at.append(time.monotonic())
    gaps = [b - a for a, b in itertools.pairwise(sent_at)]
    # While more than half is left (9, 8, 7, 6 after the first four), no wait; then 2 s over the 5, 4, 3 left.
    assert all(g < 0.3 for g in gaps[:3]), gaps
    for k, left in ((4, 5), (5, 4), (6, 3)):
        assert gaps[k] >= 2 / (left + 1) - 0.05, gaps
    assert len(capture.events()) == 8


def test_207_retries_only_retryable_items_and_drops_rejected(
    capture: CaptureServer, make_client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    def mixed(events: list[dict[str, Any]]) -> Any:
        results = [
            {"index": 0, "status": 202, "event_id": events[0]["event_id"]},
            {"index": 1, "status": 422, "error": {"code": "validation_error", "message": "bad", "field": "payload.x"}},
            {"index": 2, "status": 503, "error": {"code": "unavailable", "message": "log busy"}},
        ]
        return 207, {}, {"results": results}

    capture.responses = [mixed]
    client = make_client()
    client._transport.backoff_base = 0.01
    _emit_n(client, 3)
    with caplog.at_level(logging.WARNING, logger="runwatch"):
        assert client.flush(10)
    assert len(capture.requests) == 2
    assert [e["payload"]["node_name"] for e in capture.requests[1]] == ["n2"]
    assert capture.requests[1][0]["event_id"] == capture.requests[0][2]["event_id"]
    assert [e["payload"]["node_name"] for e in capture.events()] == ["n0", "n2"]
    assert client.stats.dropped_rejected == 1
    assert "payload.x" in caplog.text


def test_refused_request_is_dropped_and_logged(
    capture: CaptureServer, make_client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    capture.default = lambda ev: (401, {}, {"error": {"code": "unauthorized", "message": "invalid API key"}})
    client = make_client()
    _emit_n(client, 2)
    with caplog.at_level(logging.ERROR, logger="runwatch"):
        assert client.flush(5)
    assert len(capture.requests) == 1
    assert client.stats.dropped_rejected == 2
    assert "invalid API key" in caplog.text


def test_413_halves_the_batch(capture: CaptureServer, make_client: Any) -> None:
    capture.default = lambda ev: (
        (413, {}, {"error": {"code": "too_large", "message": "body"}}) if len(ev) > 10 else (accept_all(ev))
    )
    client = make_client()
    client._transport.max_batch_bytes = 40_000
    for _ in range(40):
        client.emit("step", "r", {"node_name": "n", "phase": "end", "output": "y" * 500})
    assert client.flush(10)
    assert len(capture.events()) == 40


def test_server_down_never_slows_or_breaks_the_agent_and_events_arrive_later() -> None:
    port = free_port()  # nothing listens here yet
    client = Runwatch(api_key="cd" * 32, base_url=f"http://127.0.0.1:{port}", flush_interval=0.01)
    client._transport.backoff_base = 0.05
    client._transport.backoff_max = 0.2
    try:
        t0 = time.perf_counter()
        for i in range(2000):
            with client.run("agent", input={"i": i}) as run, run.step("work"):
                pass
        per_run = (time.perf_counter() - t0) / 2000
        assert per_run < 0.002, f"{per_run * 1e6:.0f} µs per run while the server is down"
        assert client.flush(0.3) is False  # nothing can be delivered
        assert client.stats.sent == 0
        srv = CaptureServer(port=port)  # the server comes back
        try:
            assert client.flush(20)
            assert len(srv.events()) == 8000
            assert len(srv.events("run_end")) == 2000
        finally:
            srv.close()
    finally:
        client.shutdown(timeout=1)


def test_queue_full_drops_oldest_by_default_and_counts(caplog: pytest.LogCaptureFixture) -> None:
    port = free_port()
    client = Runwatch(api_key="cd" * 32, base_url=f"http://127.0.0.1:{port}", max_queue_size=100, debug=True)
    client._transport.backoff_base = 10  # keep everything queued
    try:
        with caplog.at_level(logging.DEBUG, logger="runwatch"):
            _emit_n(client, 150)
        time.sleep(0.3)
        assert client.stats.dropped_queue_full >= 50
        assert "dropped oldest step of run r1" in caplog.text
        assert client.pending <= 101
    finally:
        client.shutdown(timeout=0.1)


def test_queue_full_drop_newest_keeps_the_first_events(capture: CaptureServer) -> None:
    client = Runwatch(api_key="ab" * 32, base_url=capture.url, max_queue_size=10, drop_policy="newest")
    client._transport._start = lambda: None  # type: ignore[method-assign]  # hold the sender back
    for i in range(15):
        client.emit("step", "r", {"node_name": f"n{i}", "phase": "start"})
    assert client.stats.dropped_queue_full == 5
    assert [e["payload"]["node_name"] for e in client._transport._queue] == [f"n{i}" for i in range(10)]


def test_no_api_key_disables_sending_without_raising(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RUNWATCH_API_KEY", raising=False)
    client = Runwatch(base_url="http://127.0.0.1:9")
    with client.run("a") as run:
        run.step("s").start().end()
    assert client.flush(1)
    assert client.stats.enqueued == 0


def test_environment_configures_the_client(monkeypatch: pytest.MonkeyPatch, capture: CaptureServer) -> None:
    monkeypatch.setenv("RUNWATCH_API_KEY", "ef" * 32)
    monkeypatch.setenv("RUNWATCH_BASE_URL", capture.url + "/")
    client = Runwatch(flush_interval=0.01)
    try:
        assert client.base_url == capture.url
        client.emit("run_start", "r", {}, agent_name="a")
        assert client.flush(5)
        assert capture.auth_headers == ["Bearer " + "ef" * 32]
    finally:
        client.shutdown(1)
    monkeypatch.delenv("RUNWATCH_BASE_URL")
    assert Runwatch(api_key="x", enabled=False).base_url == "http://localhost:8080"


def test_shutdown_flushes_and_later_events_are_dropped(capture: CaptureServer, make_client: Any) -> None:
    client = make_client(flush_interval=5)  # only a flush will send
    _emit_n(client, 5)
    assert client.shutdown(timeout=5)
    assert len(capture.events()) == 5
    client.emit("step", "r", {"node_name": "late", "phase": "start"})
    assert client.stats.dropped_queue_full == 1


def test_flush_at_interpreter_exit(capture: CaptureServer, tmp_path: Any) -> None:
    import subprocess
    import sys

    script = tmp_path / "agent.py"
    script.write_text(
        "from runwatch import Runwatch\n"
        f"c = Runwatch(api_key='ab'*32, base_url='{capture.url}', flush_interval=60)\n"
        "with c.run('exit-agent', input={'x': 1}):\n"
        "    pass\n"
    )
    subprocess.run([sys.executable, str(script)], check=True, timeout=30)
    assert [e["event_type"] for e in capture.events()] == ["run_start", "run_end"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_gets_its_own_sender(capture: CaptureServer, make_client: Any) -> None:
    client = make_client(flush_interval=0.5)
    client.emit("step", "parent", {"node_name": "before-fork", "phase": "start"})  # still queued at the fork
    pid = os.fork()
    if pid == 0:  # the child: the parent's sender thread does not exist here
        code = 1
        try:
            client.emit("step", "child", {"node_name": "in-child", "phase": "start"})
            code = 0 if client.flush(10) else 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert client.flush(5)
    assert sorted(e["sdk_run_id"] for e in capture.events()) == ["child", "parent"]  # each sent once

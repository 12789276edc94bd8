"""Scores against a REAL Runwatch server: run.score / client.score right after a run (its events flushed first,
a 404 while the server stores the run retried), read back through GET /api/runs/{id}/scores; refusals raise."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from runwatch import Runwatch
from runwatch.errors import RunwatchError

from .conftest import RealServer

pytestmark = pytest.mark.integration


@pytest.fixture
def client(real_server: RealServer) -> Iterator[Runwatch]:
    c = Runwatch(api_key=real_server.api_key, base_url=real_server.base_url, flush_interval=5.0)
    yield c
    c.shutdown(timeout=5)


def test_scores_a_run_and_a_span_right_after_the_run(real_server: RealServer, client: Runwatch) -> None:
    rid = f"py-scored-{uuid.uuid4()}"
    with client.run("py-scored-agent", input={"q": "hi"}, sdk_run_id=rid) as run:
        with run.llm_call("answer", model="gpt-4o") as call:
            call.set_usage(prompt_tokens=10, completion_tokens=2)
            span = call.span_id
        run.set_output("hello")
    # The events are still queued (flush_interval 5 s): score() sends them first and waits for the run.
    first = run.score("user_feedback", True, comment="spot on", source="human")
    second = client.score(rid, "correctness", 0.75, span_id=span, source="llm_judge")
    assert first and second and first != second
    status, body = real_server.get(f"/api/runs/{rid}/scores")
    assert status == 200
    got = [(s["score_id"], s["name"], s["value"], s["comment"], s["source"], s["span_id"]) for s in body["scores"]]
    assert got == [
        (first, "user_feedback", True, "spot on", "human", None),
        (second, "correctness", 0.75, "", "llm_judge", span),
    ]


def test_a_refused_score_raises_naming_the_field(real_server: RealServer, client: Runwatch) -> None:
    rid = f"py-refused-{uuid.uuid4()}"
    with client.run("py-scored-agent", sdk_run_id=rid):
        pass
    with pytest.raises(RunwatchError, match=r"HTTP 422.*value"):
        client.score(rid, "label", "x" * 201)


def test_a_run_that_never_arrives_gives_up_after_the_timeout(client: Runwatch) -> None:
    started = time.monotonic()
    with pytest.raises(RunwatchError, match="could not score run"):
        client.score(f"py-missing-{uuid.uuid4()}", "thumbs", False, timeout=1.0)
    assert time.monotonic() - started < 5

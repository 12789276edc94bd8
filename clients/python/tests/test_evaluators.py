"""Server-side evaluators from the Python client against a REAL Runwatch server whose agents-service asks a fake
OpenAI server on loopback (docs/EVALUATION.md): list the project's evaluators, run an LLM judge on a run (the
rendered prompt, the raw answer, the score, nothing stored), and attach it to an experiment, so that each of its runs
is judged on the server as it ends -- the judge's scores land beside the client's own evaluators'."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import pytest

from runwatch import Runwatch, RunwatchError

from .conftest import RealServer
from .fake_llm import JUDGE_FAIL_MARKER

pytestmark = pytest.mark.integration


@pytest.fixture
def judge(real_server: RealServer) -> str:
    name = f"correct-{uuid.uuid4().hex[:8]}"
    status, body = real_server.post(
        "/api/evaluators",
        {
            "name": name,
            "type": "llm_judge",
            "provider": "openai",
            "prompt": "Expected {{expected_output}}; got {{output}}. Correct?",
            "output": {"type": "boolean"},
        },
    )
    assert status == 201, body
    return name


def wait_for(what: str, read: Any, done: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: {json.dumps(value)[:1000]}")
        time.sleep(0.1)


def test_lists_and_runs_an_evaluator_on_a_run(client: Runwatch, real_server: RealServer, judge: str) -> None:
    assert judge in [e["name"] for e in client.list_evaluators()]
    sdk_run_id = f"py-eval-{uuid.uuid4().hex[:8]}"
    with client.run("qa-bot", {"question": "Capital of France?"}, sdk_run_id=sdk_run_id) as run:
        run.set_output("Paris")
    client.flush()
    wait_for(
        "run stored",
        lambda: real_server.get(f"/api/runs/{sdk_run_id}"),
        lambda r: r[0] == 200 and r[1]["run"]["status"] == "success",
    )
    result = client.run_evaluator(judge, sdk_run_id=sdk_run_id)
    assert result["prompt"].startswith("Expected (none); got ")
    assert "Paris" in result["prompt"]
    assert json.loads(result["raw_answer"]) == {"explanation": "The answer is right.", "score": True}
    assert result["score"] == {"name": judge, "value": True, "comment": "The answer is right."}
    assert result["cost_usd"] >= 0
    assert real_server.get(f"/api/runs/{sdk_run_id}/scores")[1]["scores"] == []
    with pytest.raises(RunwatchError) as refused:
        client.run_evaluator("no-such-evaluator", sdk_run_id=sdk_run_id)
    assert refused.value.status == 404
    with pytest.raises(ValueError):
        client.run_evaluator(judge)


def test_an_experiment_attaches_server_evaluators(client: Runwatch, real_server: RealServer, judge: str) -> None:
    dataset = f"capitals-{uuid.uuid4().hex[:8]}"
    client.create_dataset(dataset)
    client.add_dataset_items(
        dataset,
        [
            {"id": "fr", "input": "France", "expected_output": "Paris"},
            {"id": "de", "input": "Germany", "expected_output": "Berlin"},
        ],
    )
    answers = {"France": "Paris", "Germany": JUDGE_FAIL_MARKER}

    def exact(*, output: Any, expected_output: Any, **_: Any) -> bool:
        return bool(output == expected_output)

    summary = client.run_experiment(
        dataset=dataset, name="judged", task=lambda q: answers[q], evaluators=[exact], server_evaluators=[judge]
    )
    assert summary.completed_count == 2
    assert summary.evaluator_errors == []

    def items() -> list[dict[str, Any]]:
        return list(real_server.get(f"/api/experiments/{summary.experiment_id}")[1]["items"])

    got = wait_for("judge scores", items, lambda xs: all(judge in x["scores"] for x in xs))
    assert {x["item_id"]: x["scores"] for x in got} == {
        "fr": {"exact": True, judge: True},
        "de": {"exact": False, judge: False},
    }

"""Experiments from the Python client against a REAL Runwatch server: a LangGraph graph whose model calls an LLM on
loopback is the task; two config versions run over the same dataset version; each item's run is an ordinary run
naming the experiment and the item, with its LLM call and cost; an item whose LLM call fails makes that run an
error and the rest go on; a resume re-runs only that item; the activation gate then lets the better config version in
and refuses the way back until forced with a reason."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypedDict

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph

from runwatch import Runwatch, RunwatchError
from runwatch.langchain import CallbackHandler

from .conftest import RealServer
from .fake_llm import FAIL_MARKER, HttpChatModel, fake_llm

pytestmark = pytest.mark.integration


class QA(TypedDict, total=False):
    question: str
    answer: str


@pytest.fixture
def llm_url() -> Iterator[str]:
    with fake_llm(delay=0.005) as url:
        yield url


def agent(client: Runwatch, llm_url: str, style: str) -> Callable[[Any], str]:
    """The agent at a config version: version 2's prompt makes the model shout, which is what the dataset expects."""
    model = HttpChatModel(base_url=llm_url)

    def respond(state: QA) -> QA:
        reply = model.invoke([SystemMessage(f"style: {style}"), HumanMessage(state["question"])])
        return {"answer": str(reply.content)}

    graph = StateGraph(QA).add_node("respond", respond).add_edge(START, "respond").add_edge("respond", END).compile()

    def task(inp: Any) -> str:
        out = graph.invoke({"question": inp["question"]}, config={"callbacks": [CallbackHandler(client=client)]})
        return out["answer"]

    return task


def exact_match(*, output: Any, expected_output: Any, **_: Any) -> int:
    return 1 if output == expected_output else 0


def test_two_config_versions_a_failing_item_and_a_resume(
    client: Runwatch, real_server: RealServer, llm_url: str
) -> None:
    dataset = f"py qa {uuid.uuid4().hex[:8]}"
    client.create_dataset(dataset)
    items: list[dict[str, Any]] = [
        {"id": f"q{i:02d}", "input": {"question": f"what is item {i}?"}, "expected_output": f"WHAT IS ITEM {i}?"}
        for i in range(12)
    ]
    items.append({"id": "q99", "input": {"question": f"{FAIL_MARKER} now"}, "expected_output": "never"})
    client.add_dataset_items(dataset, items)

    v1 = client.run_experiment(
        dataset=dataset,
        name="echo prompt",
        task=agent(client, llm_url, "echo"),
        evaluators=[exact_match],
        agent_name="qa-bot",
        config_version=1,
        max_concurrency=4,
    )
    assert (v1.ran, v1.completed_count, v1.error_count) == (13, 13, 1)
    assert [e["item_id"] for e in v1.task_errors] == ["q99"]
    assert v1.scores["exact_match"] == {"mean": 0, "count": 12}
    assert v1.cost_usd > 0 and v1.latency_ms["p50"] is not None
    assert v1.url.endswith(f"/compare?experiments={v1.experiment_id}")

    v2 = client.run_experiment(
        dataset=dataset,
        name="shout prompt",
        task=agent(client, llm_url, "shout"),
        evaluators=[exact_match],
        agent_name="qa-bot",
        config_version=2,
        max_concurrency=8,
    )
    assert (v2.completed_count, v2.error_count) == (13, 1)
    assert v2.scores["exact_match"] == {"mean": 1, "count": 12}

    first = next(i for i in v2.items if i["item_id"] == "q00")
    assert (first["status"], first["scores"]) == ("success", {"exact_match": 1})
    run = real_server.wait_run(first["sdk_run_id"], lambda r: r["run"]["status"] == "success")["run"]
    assert (run["experiment_id"], run["dataset_item_id"], run["repetition"]) == (v2.experiment_id, "q00", 1)
    assert (run["agent_name"], run["config_version"], run["llm_calls"]) == ("qa-bot", 2, 1)
    failed = next(i for i in v2.items if i["item_id"] == "q99")
    assert failed["status"] == "error" and "HTTP 500" in failed["error"]

    async def fixed(inp: Any, item: dict[str, Any]) -> str:  # an async task: awaited in the item's worker thread
        return "never" if item["id"] == "q99" else agent(client, llm_url, "echo")(inp)

    resumed = client.run_experiment(
        dataset=dataset, name="echo prompt", resume=True, task=fixed, evaluators=[exact_match], agent_name="qa-bot"
    )
    assert (resumed.experiment_id, resumed.ran, resumed.skipped) == (v1.experiment_id, 1, 12)
    assert (resumed.error_count, resumed.completed_count) == (0, 13)
    assert resumed.scores["exact_match"] == {"mean": 1 / 13, "count": 13}

    # The gate: a rule on exact_match lets version 2 (mean 1) replace version 1 (1/13), and refuses the way back
    # unless forced with a reason. The agent is in the registry already: its runs put it there.
    assert (
        real_server.dashboard_form("/agents/qa-bot/configs", {"config": '{"prompt": "echo"}', "activate": "on"}) == 303
    )
    assert real_server.dashboard_form("/agents/qa-bot/configs", {"config": '{"prompt": "shout"}'}) == 303
    assert real_server.dashboard_form("/agents/qa-bot/gate", {"score_name": "exact_match", "max_drop": "0.05"}) == 303
    up = client.activate_config_version("qa-bot", 2)
    assert (up["forced"], up["gate"]["active_version"], up["gate"]["candidate_experiment"]["name"]) == (
        False,
        1,
        "shout prompt",
    )
    with pytest.raises(RunwatchError, match=r'HTTP 409.*"exact_match" mean would drop from 1 .* to 0\.0769'):
        client.activate_config_version("qa-bot", 1)
    forced = client.activate_config_version("qa-bot", 1, force=True, reason="support wants the echo prompt back")
    assert forced["forced"] is True


def test_repetitions_and_a_resume_of_the_one_that_failed(client: Runwatch) -> None:
    dataset = f"py reps {uuid.uuid4().hex[:8]}"
    client.create_dataset(dataset)
    client.add_dataset_items(dataset, [{"id": i, "input": {"id": i}, "expected_output": i} for i in ("a", "b", "c")])
    lock = threading.Lock()
    calls: list[str] = []
    failed: list[str] = []

    def flaky(inp: Any) -> str:  # item b's first run fails, as a flaky tool would
        with lock:
            calls.append(inp["id"])
            if inp["id"] == "b" and not failed:
                failed.append("b")
                raise RuntimeError("a flaky tool")
        return str(inp["id"])

    first = client.run_experiment(
        dataset=dataset, name="three times", task=flaky, evaluators=[exact_match], repetitions=3, max_concurrency=4
    )
    assert sorted(calls) == ["a"] * 3 + ["b"] * 3 + ["c"] * 3
    assert (first.ran, first.completed_count, first.error_count) == (9, 9, 1)
    assert [(e["item_id"], e["message"]) for e in first.task_errors] == [("b", "a flaky tool")]
    assert first.scores["exact_match"] == {"mean": 1, "count": 8}
    assert sorted((i["item_id"], i["repetition"]) for i in first.items) == [
        (i, r) for i in ("a", "b", "c") for r in (1, 2, 3)
    ]
    failed_repetition = first.task_errors[0]["repetition"]

    # The resume names no repetitions: it follows the experiment's own three. It has no evaluators, so no score
    # waits for the re-run to be stored: the summary itself must wait for it, though the count was complete before.
    calls.clear()
    resumed = client.run_experiment(dataset=dataset, name="three times", task=flaky, resume=True)
    assert calls == ["b"]
    assert (resumed.experiment_id, resumed.ran, resumed.skipped) == (first.experiment_id, 1, 8)
    assert (resumed.error_count, resumed.completed_count) == (0, 9)
    assert resumed.scores["exact_match"] == {"mean": 1, "count": 8}
    item_b = next(i for i in resumed.items if i["item_id"] == "b" and i["repetition"] == failed_repetition)
    assert item_b["status"] == "success"

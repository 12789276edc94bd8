"""Experiments (docs/EVALUATION.md): run a task over every item of a dataset version, each item x repetition as an
ordinary traced run that names the experiment and the item, score each output with evaluator functions, and
return the server's summary. A task that raises makes that item's run an error and the rest go on; `resume`
re-runs only the items without a successful result."""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from ._datasets import _call, dataset_items
from ._evaluators import attach_evaluators
from ._scores import post_scores
from .errors import RunwatchError

if TYPE_CHECKING:
    from .client import Runwatch


@dataclass(frozen=True)
class ExperimentSpec:
    dataset: str
    name: str
    task: Callable[..., Any]
    evaluators: tuple[Callable[..., Any], ...] = ()
    server_evaluators: tuple[str, ...] = ()
    max_concurrency: int = 8
    repetitions: int = 1
    description: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    agent_name: str | None = None
    config_version: int | None = None
    prompt_name: str | None = None
    prompt_version: int | None = None
    dataset_version: int | None = None
    resume: bool = False
    results_timeout: float = 30.0


@dataclass(frozen=True)
class ExperimentSummary:
    """What run_experiment returns: the server's aggregates over the experiment's results, and what this call saw."""

    experiment_id: str
    name: str
    dataset: str
    dataset_version: int
    url: str
    ran: int
    skipped: int
    completed_count: int
    error_count: int
    scores: dict[str, dict[str, Any]]
    cost_usd: float
    latency_ms: dict[str, float | None]
    task_errors: list[dict[str, Any]]
    evaluator_errors: list[dict[str, Any]]
    items: list[dict[str, Any]]


def _scores_of(evaluator: Callable[..., Any], result: Any) -> list[dict[str, Any]]:
    """An evaluator's result as scores: a value (named after the evaluator), a {name?, value, comment?} or a list."""
    fallback = getattr(evaluator, "__name__", None) or "score"
    if result is None:
        return []
    if isinstance(result, list):
        return [dict(r) for r in result]
    if isinstance(result, Mapping):
        return [{"name": result.get("name") or fallback, "value": result["value"], "comment": result.get("comment")}]
    return [{"name": fallback, "value": result}]


def _maybe_await(value: Any) -> Any:
    return asyncio.run(value) if inspect.isawaitable(value) else value


def _takes_item(task: Callable[..., Any]) -> bool:
    """Whether the task takes the item beside its input (task(input, item)) rather than task(input)."""
    try:
        params = [
            p
            for p in inspect.signature(task).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
        ]
    except (TypeError, ValueError):
        return False
    return len(params) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)


def _experiment_of(client: Runwatch, spec: ExperimentSpec) -> tuple[dict[str, Any], set[tuple[str, int]]]:
    if spec.resume:
        query = urlencode({"dataset": spec.dataset, "name": spec.name})
        found = _call(client, "GET", f"/api/experiments?{query}")["experiments"]
        if found:
            items = _call(client, "GET", f"/api/experiments/{found[0]['id']}")["items"]
            return found[0], {(i["item_id"], i["repetition"]) for i in items if i["status"] == "success"}
    body = {
        k: v
        for k, v in {
            "dataset": spec.dataset,
            "name": spec.name,
            "description": spec.description,
            "metadata": spec.metadata or None,
            "agent_name": spec.agent_name,
            "config_version": spec.config_version,
            "prompt_name": spec.prompt_name,
            "prompt_version": spec.prompt_version,
            "dataset_version": spec.dataset_version,
            "repetitions": spec.repetitions,
        }.items()
        if v is not None
    }
    return _call(client, "POST", "/api/experiments", body, expect=201)["experiment"], set()


def run_experiment(client: Runwatch, spec: ExperimentSpec) -> ExperimentSummary:
    experiment, done = _experiment_of(client, spec)
    if spec.server_evaluators:  # before the first run ends, so that every run is judged
        attach_evaluators(client, experiment, spec.server_evaluators)
    repetitions = int(experiment["repetitions"])  # as the experiment was made: a resume follows it
    work: list[tuple[dict[str, Any], int]] = []
    skipped = 0
    for item in dataset_items(client, spec.dataset, version=experiment["dataset_version"], status="active"):
        for repetition in range(1, repetitions + 1):
            if (item["id"], repetition) in done:
                skipped += 1
            else:
                work.append((item, repetition))

    lock = threading.Lock()
    started: list[str] = []
    task_errors: list[dict[str, Any]] = []
    evaluator_errors: list[dict[str, Any]] = []
    takes_item = _takes_item(spec.task)
    # Sent in batches once the runs are sent: one request per thousand scores (a score waits for its run).
    scores: list[dict[str, Any]] = []
    scored_by: list[tuple[dict[str, Any], int, str]] = []

    def evaluator_error(item: dict[str, Any], repetition: int, name: str, err: BaseException) -> None:
        with lock:
            evaluator_errors.append(
                {"item_id": item["id"], "repetition": repetition, "evaluator": name, "message": str(err)[:2000]}
            )

    def run_one(item: dict[str, Any], repetition: int) -> None:
        fields = {"experiment_id": experiment["id"], "dataset_item_id": item["id"], "repetition": repetition}
        try:
            with client.run(
                spec.agent_name or "experiment",
                item["input"],
                config_version=spec.config_version,
                framework="experiment",
                start_fields=fields,
            ) as run:
                with lock:
                    started.append(run.sdk_run_id)
                output = _maybe_await(spec.task(item["input"], item) if takes_item else spec.task(item["input"]))
                run.set_output(output)
        except Exception as err:
            with lock:
                task_errors.append({"item_id": item["id"], "repetition": repetition, "message": str(err)[:2000]})
            return
        for evaluator in spec.evaluators:
            name = getattr(evaluator, "__name__", None) or "score"
            try:
                result = _maybe_await(
                    evaluator(
                        input=item["input"],
                        output=output,
                        expected_output=item.get("expected_output"),
                        metadata=item.get("metadata") or {},
                        item=item,
                    )
                )
                for score in _scores_of(evaluator, result):
                    with lock:
                        scores.append(
                            {
                                "sdk_run_id": run.sdk_run_id,
                                "name": str(score["name"]),
                                "value": score["value"],
                                "comment": score.get("comment"),
                            }
                        )
                        scored_by.append((item, repetition, name))
            except Exception as err:
                evaluator_error(item, repetition, name, err)

    with ThreadPoolExecutor(max_workers=max(1, min(spec.max_concurrency, len(work) or 1))) as pool:
        for f in [pool.submit(run_one, item, repetition) for item, repetition in work]:
            f.result()
    for index, why in post_scores(client, scores):
        item, repetition, name = scored_by[index]
        evaluator_error(item, repetition, name, RunwatchError(why))
    _call(client, "POST", f"/api/experiments/{experiment['id']}/complete", {})

    # The runs pass through the server's pipeline: wait (bounded) until every run this call started is stored as
    # ended. (A count would not do: a resumed experiment's count is complete before its re-runs are stored.)
    deadline = time.monotonic() + spec.results_timeout
    while True:
        final = _call(client, "GET", f"/api/experiments/{experiment['id']}")
        e = final["experiment"]
        ended = {i["sdk_run_id"] for i in final["items"] if i["status"] in ("success", "error")}
        if all(run_id in ended for run_id in started) or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    return ExperimentSummary(
        experiment_id=e["id"],
        name=e["name"],
        dataset=e["dataset"],
        dataset_version=e["dataset_version"],
        url=f"{client.base_url}/datasets/{quote(e['dataset'], safe='')}/compare?experiments={e['id']}",
        ran=len(work),
        skipped=skipped,
        completed_count=e["completed_count"],
        error_count=e["error_count"],
        scores=e["scores"],
        cost_usd=e["cost_usd"],
        latency_ms=e["latency_ms"],
        task_errors=task_errors,
        evaluator_errors=evaluator_errors,
        items=final["items"],
    )

"""Server-side evaluators (docs/EVALUATION.md): list the project's evaluators, run one on a run (or a span of it) or
on a dataset item with an output -- the playground's call: the rendered prompt, the judge's raw answer, the score
and its cost, nothing stored -- and attach evaluators to an experiment, so its runs are judged as they end."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from ._datasets import _call
from .errors import RunwatchError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .client import Runwatch

NO_OUTPUT: Any = object()  # run_evaluator on an item without an output: the judge sees none


def list_evaluators(client: Runwatch) -> list[dict[str, Any]]:
    return list(_call(client, "GET", "/api/evaluators")["evaluators"])


def find_evaluator(client: Runwatch, name_or_id: str) -> dict[str, Any]:
    for e in list_evaluators(client):
        if name_or_id in (e["id"], e["name"]):
            return e
    raise RunwatchError(f"no evaluator named {name_or_id!r} in this project", status=404)


def attach_evaluators(
    client: Runwatch, experiment: dict[str, Any], names_or_ids: Iterable[str]
) -> list[dict[str, Any]]:
    """A rule per evaluator that judges every run of the experiment as it ends; a resumed experiment keeps its rules."""
    out: list[dict[str, Any]] = []
    for name_or_id in names_or_ids:
        e = find_evaluator(client, name_or_id)
        body = {
            "evaluator_id": e["id"],
            "name": f"experiment {experiment['id']}: {e['name']}"[:200],
            "filter": {"experiment_id": experiment["id"]},
            "sampling": 1,
        }
        try:
            rule = _call(client, "POST", "/api/evaluation-rules", body, expect=201)["rule"]
            out.append({"evaluator": e["name"], "rule_id": rule["id"]})
        except RunwatchError as err:
            if err.status != 409:
                raise
            out.append({"evaluator": e["name"], "rule_id": None})  # attached when the experiment first ran
    return out


class ServerEvaluators:
    """The evaluator calls of the client (a base of Runwatch): the project's evaluators, and running one."""

    def list_evaluators(self) -> list[dict[str, Any]]:
        """The project's server-side evaluators (LLM judges and built-in checks) at their latest versions."""
        return list_evaluators(cast("Runwatch", self))

    def run_evaluator(
        self,
        name_or_id: str,
        *,
        sdk_run_id: str | None = None,
        span_id: str | None = None,
        dataset: str | None = None,
        item_id: str | None = None,
        output: Any = NO_OUTPUT,
    ) -> dict[str, Any]:
        """Runs a server-side evaluator on a run (or a span of it), or on a dataset item with `output=...`, as the
        playground does: {"prompt", "raw_answer", "score" ({name, value, comment} or None), "error", "cost_usd", ...}.
        Nothing is stored."""
        client = cast("Runwatch", self)
        evaluator = find_evaluator(client, name_or_id)
        if sdk_run_id is not None:
            body: dict[str, Any] = {"sdk_run_id": sdk_run_id, **({"span_id": span_id} if span_id else {})}
        elif dataset is not None and item_id is not None:
            body = {"dataset": dataset, "item_id": item_id, **({} if output is NO_OUTPUT else {"output": output})}
        else:
            raise ValueError("name what to judge: sdk_run_id (and span_id), or dataset and item_id (and output)")
        return dict(_call(client, "POST", f"/api/evaluators/{evaluator['id']}/try", body))

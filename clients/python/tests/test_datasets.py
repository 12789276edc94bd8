"""Datasets against a REAL Runwatch server: create one, add items as versions (a run's id as their source), read
each version back page by page; a bad item raises with the field the server names, and nothing is written."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from runwatch import Runwatch
from runwatch.errors import RunwatchError

from .conftest import RealServer

pytestmark = pytest.mark.integration


@pytest.fixture
def client(real_server: RealServer) -> Iterator[Runwatch]:
    c = Runwatch(api_key=real_server.api_key, base_url=real_server.base_url)
    yield c
    c.shutdown(timeout=5)


def test_builds_a_dataset_in_versions_and_reads_them_back(client: Runwatch) -> None:
    name = f"py set {uuid.uuid4().hex[:8]}"
    created = client.create_dataset(name, description="from the Python client")
    assert (created["name"], created["version"], created["item_count"]) == (name, 0, 0)
    with pytest.raises(RunwatchError, match="already has a dataset named"):
        client.create_dataset(name)

    first = client.add_dataset_items(
        name, [{"id": f"q{i:04d}", "input": {"question": f"#{i}"}, "expected_output": i} for i in range(1_500)]
    )
    assert (first["version"], first["changed"], len(first["ids"])) == (1, 1_500, 1_500)
    second = client.add_dataset_items(
        name, [{"id": "q0001", "input": {"question": "#1"}, "expected_output": "one", "source_sdk_run_id": "run-7"}]
    )
    assert (second["version"], second["changed"]) == (2, 1)

    v1 = list(client.dataset_items(name, version=1))
    now = list(client.dataset_items(name))
    assert len(v1) == len(now) == 1_500
    assert [i["expected_output"] for i in v1[:2]] == [0, 1]
    assert (now[1]["expected_output"], now[1]["source"], now[1]["source_sdk_run_id"], now[1]["version"]) == (
        "one",
        "run",
        "run-7",
        2,
    )
    info = client.get_dataset(name)
    assert [v["version"] for v in info["versions"]] == [2, 1]

    with pytest.raises(RunwatchError, match=r"items\[1\]\.input"):
        client.add_dataset_items(name, [{"input": 1}, {"expected_output": 2}])
    with pytest.raises(RunwatchError, match="HTTP 404"):
        client.add_dataset_items(f"{name} missing", [{"input": 1}])
    assert client.get_dataset(name)["dataset"]["version"] == 2

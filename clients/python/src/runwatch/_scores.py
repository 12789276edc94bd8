"""Scores: POST /api/scores (docs/API.md, Scores): a judgement of a run or of one of its spans (user feedback, an
evaluation). The run's queued events are flushed first; a 404 while the server is still storing the run, a 429
and a 5xx are retried until `timeout`."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, Literal

from ._http import HttpClient, TransportError
from .errors import RunwatchError

if TYPE_CHECKING:
    from .client import Runwatch

ScoreSource = Literal["api", "human", "llm_judge", "otel"]


def post_score(
    client: Runwatch,
    sdk_run_id: str,
    name: str,
    value: float | bool | str,
    *,
    comment: str | None = None,
    span_id: str | None = None,
    source: ScoreSource | None = None,
    timeout: float = 10.0,
) -> str:
    """Stores a score; returns its score_id. Raises RunwatchError when refused (422, 401) or not stored in time."""
    if not client.api_key:
        raise RunwatchError("no API key configured")
    body: dict[str, object] = {"sdk_run_id": sdk_run_id, "name": name, "value": value}
    if comment is not None:
        body["comment"] = comment
    if span_id is not None:
        body["span_id"] = span_id
    if source is not None:
        body["source"] = source
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    deadline = time.monotonic() + timeout
    client.flush(timeout=timeout)  # the run's events first: the server scores only runs it has stored
    http = HttpClient(client.base_url, client.api_key, client.request_timeout)
    failures = 0
    try:
        while True:
            why: str
            pause: float | None = None
            try:
                resp = http.request("POST", "/api/scores", data)
            except TransportError as e:
                why = str(e)
            else:
                if resp.status == 201:
                    return str((resp.json() or {}).get("score_id", ""))
                text = resp.body[:300].decode("utf-8", "replace")
                if resp.status in (401, 403):
                    raise RunwatchError(f"the server refused the API key (HTTP {resp.status}): {text}")
                if resp.status not in (404, 429) and resp.status < 500:
                    raise RunwatchError(f"the score was refused (HTTP {resp.status}): {text}")
                why = f"HTTP {resp.status}: {text}"
                retry_after = resp.header("retry-after")
                if retry_after and retry_after.isdigit():
                    pause = float(retry_after)
            failures += 1
            left = deadline - time.monotonic()
            if left <= 0:
                raise RunwatchError(f"could not score run {sdk_run_id} within {timeout}s ({why})")
            time.sleep(min(left, pause if pause is not None else min(2.0, 0.1 * 2 ** min(failures, 5))))
    finally:
        http.close()


_BATCH = 1000


def post_scores(client: Runwatch, scores: list[dict[str, Any]], timeout: float = 60.0) -> list[tuple[int, str]]:
    """Stores many scores ({"sdk_run_id", "name", "value", "comment"?}) with POST /api/scores/batch, a thousand per
    request, after flushing the runs' events; a score whose run is not stored yet is sent again until `timeout`.
    Returns the refused ones as (index in `scores`, the server's reason)."""
    from ._datasets import _call  # the shared request-with-retries of the data calls

    if not scores:
        return []
    client.flush(timeout)
    deadline = time.monotonic() + timeout
    refused: list[tuple[int, str]] = []
    pending = list(enumerate(scores))
    while pending:
        chunk = pending[:_BATCH]
        body = {"scores": [{k: v for k, v in s.items() if v is not None} for _, s in chunk]}
        results = _call(client, "POST", "/api/scores/batch", body, expect=207)["results"]
        again = []
        for r in results:
            item = chunk[r["index"]]
            if r["status"] == 201:
                continue
            if r["status"] == 404 and time.monotonic() < deadline:
                again.append(item)
            else:
                refused.append((item[0], (r.get("error") or {}).get("message") or f"HTTP {r['status']}"))
        pending = again + pending[_BATCH:]
        if again and len(again) == len(chunk):
            time.sleep(0.25)  # the runs are still on their way
    return refused

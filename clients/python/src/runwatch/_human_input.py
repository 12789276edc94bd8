"""Human input: reading the dashboard's answer to a run's question (GET /api/runs/{id}/input, long-polled)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote, urlencode

from ._http import HttpClient, TransportError
from .errors import HumanInputTimeout, RunwatchError

if TYPE_CHECKING:
    from .client import Runwatch

logger = logging.getLogger("runwatch")


@dataclass(frozen=True)
class HumanInput:
    """An answer given on the dashboard to a human-input request."""

    response: str
    responded_by: str | None = None
    answered_at: str | None = None


class _HttpStatus(Exception):
    def __init__(self, status: int, retry_after: str | None, body: str) -> None:
        super().__init__(f"HTTP {status}: {body}")
        self.status = status
        self.body = body
        try:
            self.retry_after: float | None = min(300.0, max(0.0, float(retry_after))) if retry_after else None
        except ValueError:
            self.retry_after = None


def get_input(client: Runwatch, sdk_run_id: str, *, wait: float = 0) -> HumanInput | None:
    """One look at GET /api/runs/{sdk_run_id}/input (long-polls up to `wait` s). None if no answer yet."""
    http = HttpClient(client.base_url, client.api_key, client.request_timeout + wait)
    try:
        return poll_input(client, http, sdk_run_id, wait)
    finally:
        http.close()


def poll_input(client: Runwatch, http: HttpClient, sdk_run_id: str, wait: float) -> HumanInput | None:
    query = urlencode({"wait": int(wait)}) if wait > 0 else ""
    path = f"/api/runs/{quote(sdk_run_id, safe='')}/input" + (f"?{query}" if query else "")
    resp = http.request("GET", path, timeout=client.request_timeout + wait)
    if resp.status == 204:
        return None
    if resp.status == 200:
        data = resp.json() or {}
        response = data.get("response")
        if response is None:
            return None
        return HumanInput(
            response=response if isinstance(response, str) else str(response),
            responded_by=data.get("responded_by"),
            answered_at=data.get("answered_at"),
        )
    raise _HttpStatus(resp.status, resp.header("retry-after"), resp.body[:300].decode("utf-8", "replace"))


def wait_for_input(
    client: Runwatch, sdk_run_id: str, timeout: float | None = None, *, poll_wait: float = 30.0
) -> HumanInput:
    """Long-polls the input endpoint until a (new) answer arrives; raises HumanInputTimeout."""
    if not client.api_key:
        raise RunwatchError("no API key configured")
    deadline = None if timeout is None else time.monotonic() + timeout
    consumed = client._consumed_answers.setdefault(sdk_run_id, set())
    http = HttpClient(client.base_url, client.api_key, client.request_timeout + poll_wait)
    failures = 0
    try:
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise HumanInputTimeout(f"no human input for run {sdk_run_id} within {timeout}s")
            wait = poll_wait if left is None else max(0.0, min(poll_wait, left))
            pause = 0.0
            try:
                answer = poll_input(client, http, sdk_run_id, wait)
                failures = 0
                if answer is not None:
                    key = (answer.answered_at, answer.response)
                    if key not in consumed:
                        consumed.add(key)
                        return answer
                    pause = 1.0  # the server still shows an answer we already used: ask again shortly
                elif wait < 1:
                    pause = 0.5
            except _HttpStatus as e:
                if e.status in (401, 403):
                    raise RunwatchError(f"the server refused the API key (HTTP {e.status}): {e.body}") from None
                failures += 1
                # 404: the run is not stored yet (ingest is asynchronous) or the server lacks the endpoint.
                pause = e.retry_after if e.retry_after is not None else min(30.0, 0.5 * 2 ** min(failures, 6))
                if failures == 1 or client.debug:
                    logger.info("runwatch: input endpoint answered HTTP %d; polling again", e.status)
            except TransportError as e:
                failures += 1
                pause = min(30.0, 0.5 * 2 ** min(failures, 6))
                if failures == 1 or client.debug:
                    logger.warning("runwatch: cannot reach the server for human input (%s); retrying", e)
            if pause:
                if deadline is not None:
                    pause = min(pause, max(0.0, deadline - time.monotonic()))
                time.sleep(pause)
    finally:
        http.close()

"""Datasets (docs/EVALUATION.md): create one, add or update items as a new version, read any version back. Each
call is one request (a 429 or a 5xx is retried a few times, honouring Retry-After); a refusal raises RunwatchError
with the server's message, which names the field (`items[3].input`)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from ._http import HttpClient, TransportError
from .errors import RunwatchError

if TYPE_CHECKING:
    from .client import Runwatch

_ATTEMPTS = 4


def _call(client: Runwatch, method: str, path: str, body: Any = None, *, expect: int = 200) -> Any:
    if not client.api_key:
        raise RunwatchError("no API key configured")
    data = None if body is None else json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
    http = HttpClient(client.base_url, client.api_key, client.request_timeout)
    try:
        for attempt in range(_ATTEMPTS):
            try:
                resp = http.request(method, path, data)
            except TransportError as e:
                why = str(e)
                pause = 0.2 * 2**attempt
            else:
                if resp.status == expect:
                    return resp.json()
                text = resp.body[:2000].decode("utf-8", "replace")
                if resp.status != 429 and resp.status < 500:
                    message = (
                        (resp.json() or {}).get("error", {}).get("message") if resp.body.startswith(b"{") else None
                    )
                    raise RunwatchError(
                        f"{method} {path} was refused (HTTP {resp.status}): {message or text}", status=resp.status
                    )
                why = f"HTTP {resp.status}: {text[:300]}"
                retry_after = resp.header("retry-after")
                pause = float(retry_after) if retry_after and retry_after.isdigit() else 0.2 * 2**attempt
            if attempt < _ATTEMPTS - 1:
                time.sleep(min(pause, 5.0))
        raise RunwatchError(f"{method} {path} failed {_ATTEMPTS} times ({why})")
    finally:
        http.close()


def _path(name: str, tail: str = "") -> str:
    return f"/api/datasets/{quote(name, safe='')}{tail}"


def create_dataset(client: Runwatch, name: str, description: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name}
    if description is not None:
        body["description"] = description
    return _call(client, "POST", "/api/datasets", body, expect=201)["dataset"]


def get_dataset(client: Runwatch, name: str) -> dict[str, Any]:
    return _call(client, "GET", _path(name))


def add_dataset_items(client: Runwatch, name: str, items: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    return _call(client, "POST", _path(name, "/items"), {"items": [dict(i) for i in items]}, expect=201)


def dataset_items(
    client: Runwatch, name: str, *, version: int | None = None, status: str | None = None
) -> Iterator[dict[str, Any]]:
    after: str | None = None
    while True:
        query = {
            k: v
            for k, v in {"version": version, "status": status, "after": after, "limit": 1000}.items()
            if v is not None
        }
        page = _call(client, "GET", _path(name, f"/items?{urlencode(query)}"))
        yield from page["items"]
        after = page.get("next_after")
        if not after:
            return

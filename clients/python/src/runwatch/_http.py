"""A small HTTP/1.1 client over http.client with one keep-alive connection (standard library only).

One instance is used by one thread at a time (the sender thread, or a caller of the read API); the
connection is re-opened after any transport error.
"""

from __future__ import annotations

import http.client
import json
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from . import __version__

USER_AGENT = f"runwatch-python/{__version__}"


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


class TransportError(Exception):
    """The request did not produce an HTTP response (connection refused, reset, timeout, DNS...)."""


class HttpClient:
    def __init__(self, base_url: str, api_key: str | None, timeout: float) -> None:
        parts = urlsplit(base_url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._https else 80)
        self._prefix = parts.path.rstrip("/")
        self._api_key = api_key
        self.timeout = timeout
        self._conn: http.client.HTTPConnection | None = None

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        if self._conn is None:
            if self._https:
                self._conn = http.client.HTTPSConnection(
                    self._host, self._port, timeout=timeout, context=ssl.create_default_context()
                )
            else:
                self._conn = http.client.HTTPConnection(self._host, self._port, timeout=timeout)
        else:
            self._conn.timeout = timeout
            if self._conn.sock is not None:
                self._conn.sock.settimeout(timeout)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        *,
        timeout: float | None = None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        """Sends one request; raises TransportError when no HTTP response came back."""
        hdrs = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if self._api_key:
            hdrs["Authorization"] = f"Bearer {self._api_key}"
        if body is not None:
            hdrs["Content-Type"] = "application/json"
        if headers:
            hdrs.update(headers)
        # A kept-alive connection the server closed meanwhile fails on first use: retry once on a fresh one.
        for attempt in (0, 1):
            reused = self._conn is not None
            conn = self._connection(self.timeout if timeout is None else timeout)
            try:
                conn.request(method, self._prefix + path, body=body, headers=hdrs)
                resp = conn.getresponse()
                data = resp.read()
                headers_out = {k.lower(): v for k, v in resp.getheaders()}
                if resp.getheader("connection", "").lower() == "close":
                    self.close()
                return Response(resp.status, headers_out, data)
            except (TimeoutError, http.client.HTTPException, OSError) as e:
                self.close()
                if attempt == 0 and reused and not isinstance(e, TimeoutError):
                    continue
                raise TransportError(f"{type(e).__name__}: {e}") from e
        raise AssertionError("unreachable")

"""A loopback HTTP server that speaks the ingest batch contract and records what it receives.

Used by the unit tests to exercise the real transport (sockets, HTTP, retries) without a Runwatch server.
Behaviour per request is scripted with `responses`: a queue of callables (events) -> (status, headers, body).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = tuple[int, dict[str, str], Any]


def accept_all(events: list[dict[str, Any]]) -> Reply:
    return (
        207,
        {},
        {"results": [{"index": i, "status": 202, "event_id": e.get("event_id")} for i, e in enumerate(events)]},
    )


class CaptureServer:
    def __init__(self, port: int = 0) -> None:
        self.requests: list[list[dict[str, Any]]] = []  # every batch received (including refused ones)
        self.accepted: list[dict[str, Any]] = []  # events the server answered 2xx for, in order
        self.responses: list[Callable[[list[dict[str, Any]]], Reply]] = []
        self.default: Callable[[list[dict[str, Any]]], Reply] = accept_all
        self.auth_headers: list[str | None] = []
        self.input_answers: dict[str, list[Reply]] = {}
        self.input_requests: list[str] = []
        self.lock = threading.Lock()
        self.delay = 0.0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, status: int, headers: dict[str, str], body: Any) -> None:
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                if data:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(n))
                events = body["events"]
                with outer.lock:
                    outer.auth_headers.append(self.headers.get("Authorization"))
                    outer.requests.append(events)
                    script = outer.responses.pop(0) if outer.responses else outer.default
                status, headers, payload = script(events)
                if outer.delay:
                    import time

                    time.sleep(outer.delay)
                with outer.lock:
                    if status == 207:
                        for r in payload["results"]:
                            if 200 <= r["status"] < 300:
                                outer.accepted.append(events[r["index"]])
                    elif 200 <= status < 300:
                        outer.accepted.extend(events)
                self._reply(status, headers, payload)

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                with outer.lock:
                    outer.input_requests.append(self.path)
                    queue = outer.input_answers.get(path)
                    reply = queue.pop(0) if queue else (404, {}, {"error": {"code": "not_found", "message": "no"}})
                self._reply(*reply)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def events(self, event_type: str | None = None) -> list[dict[str, Any]]:
        with self.lock:
            return [e for e in self.accepted if event_type is None or e["event_type"] == event_type]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

from __future__ import annotations

import http.cookiejar
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from runwatch import Runwatch

from .capture_server import CaptureServer

REPO_ROOT = Path(__file__).resolve().parents[3]
CLI = REPO_ROOT / "deploy" / "bin" / "runwatch.mjs"


@pytest.fixture
def capture() -> Iterator[CaptureServer]:
    srv = CaptureServer()
    yield srv
    srv.close()


@pytest.fixture
def make_client(capture: CaptureServer) -> Iterator[Any]:
    clients: list[Runwatch] = []

    def make(**kw: Any) -> Runwatch:
        kw.setdefault("api_key", "ab" * 32)
        kw.setdefault("base_url", capture.url)
        kw.setdefault("flush_interval", 0.01)
        c = Runwatch(**kw)
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.shutdown(timeout=1)


def free_port() -> int:
    """A free port, picked at random below Linux's ephemeral range (32768-60999): one the kernel hands out for
    bind(0) or an outgoing connection could be taken by another socket before the server listens on it."""
    while True:
        port = random.randrange(20_000, 32_000)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port


# ---- a real Runwatch server (integration tests) ---------------------------------------------------------


DASHBOARD_EMAIL = "pytest@runwatch.test"
DASHBOARD_PASSWORD = "pytest-password-1"


class RealServer:
    def __init__(self, base_url: str, api_key: str, data_dir: str, env: dict[str, str]) -> None:
        self.base_url = base_url
        self.api_key = api_key
        self.data_dir = data_dir
        self.env = env

    def get(self, path: str) -> tuple[int, Any]:
        return self._request(urllib.request.Request(self.base_url + path, headers=self._auth()))

    def post(self, path: str, body: Any) -> tuple[int, Any]:
        headers = {**self._auth(), "Content-Type": "application/json"}
        data = json.dumps(body).encode()
        return self._request(urllib.request.Request(self.base_url + path, data=data, method="POST", headers=headers))

    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}

    def _request(self, req: urllib.request.Request) -> tuple[int, Any]:
        """(status, JSON body); an error body that is not JSON comes back as text."""
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                data = resp.read()
                return resp.status, json.loads(data) if data else None
        except urllib.error.HTTPError as e:
            data = e.read()
            try:
                return e.code, json.loads(data) if data else None
            except ValueError:
                return e.code, data.decode("utf-8", "replace")

    def wait_run(self, sdk_run_id: str, until: Any, timeout: float = 60.0) -> dict[str, Any]:
        """Polls GET /api/runs/{id} until `until(body)` is true; returns the body (fails with the last one)."""
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            status, body = self.get(f"/api/runs/{sdk_run_id}?limit=1000")
            last = (status, body)
            if status == 200 and until(body):
                return body
            time.sleep(0.5)
        raise AssertionError(f"run {sdk_run_id} did not reach the expected state in {timeout}s; last: {last}")

    def session_runs(self, session_id: str, count: int, timeout: float = 60.0) -> list[str]:
        """Polls GET /api/sessions/{id} until it lists `count` runs; their sdk_run_ids in start order."""
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            status, body = self.get(f"/api/sessions/{urllib.parse.quote(session_id, safe='')}")
            last = (status, body)
            if status == 200 and len(body["runs"]) >= count:
                return [r["sdk_run_id"] for r in body["runs"]]
            time.sleep(0.5)
        raise AssertionError(f"session {session_id} did not list {count} runs in {timeout}s; last: {last}")

    def dashboard_form(self, path: str, fields: dict[str, str]) -> int:
        """Posts a dashboard form as the test's user (signed in once, the page's CSRF token added): the status,
        redirects not followed. For what only the dashboard sets up (config versions, gate rules)."""
        if not hasattr(self, "_opener"):

            class NoRedirect(urllib.request.HTTPRedirectHandler):
                def redirect_request(self, *args: Any) -> None:
                    return None

            self._opener = urllib.request.build_opener(
                urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), NoRedirect()
            )
            self._post_form("/login", {"email": DASHBOARD_EMAIL, "password": DASHBOARD_PASSWORD}, "/login")
        return self._post_form(path, fields, "/settings/project")  # a page without a project in its URL: no redirect

    def _post_form(self, path: str, fields: dict[str, str], page: str) -> int:
        with self._opener.open(self.base_url + page, timeout=30) as resp:
            csrf = re.search(r'name="_csrf" value="([^"]+)"', resp.read().decode()).group(1)  # type: ignore[union-attr]
        data = urllib.parse.urlencode({"_csrf": csrf, **fields}).encode()
        try:
            with self._opener.open(
                urllib.request.Request(self.base_url + path, data=data, method="POST"), timeout=30
            ) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code

    def cli(self, *args: str) -> str:
        res = subprocess.run(
            ["node", str(CLI), *args], cwd=REPO_ROOT, env=self.env, capture_output=True, text=True, timeout=120
        )
        if res.returncode != 0:
            raise RuntimeError(f"runwatch {' '.join(args)} failed: {res.stdout}\n{res.stderr}")
        return res.stdout


def _wait_http(url: str, proc: subprocess.Popen[str], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"runwatch start exited with {proc.returncode}:\n{log.read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answers HTTP: up
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"runwatch start did not answer within {timeout}s:\n{log.read_text()[-4000:]}")


@pytest.fixture(scope="session")
def judge_llm() -> Iterator[str]:
    """The fake LLM (tests/fake_llm.py) that the server's agents-service calls for LLM-judge evaluators."""
    from .fake_llm import fake_llm

    with fake_llm() as url:
        yield url


@pytest.fixture(scope="session")
def real_server(judge_llm: str) -> Iterator[RealServer]:
    """A real server (running_server) whose LLM provider, for evaluators, is the fake LLM on loopback."""
    if not CLI.exists():
        pytest.skip(f"{CLI} not found: integration tests need the Runwatch repository")
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    with running_server(judge_llm) as srv:
        yield srv


@contextmanager
def running_server(llm_url: str) -> Iterator[RealServer]:
    """`node deploy/bin/runwatch.mjs start` on a temporary data dir and free ports, with a user and an API key; its
    LLM provider (for evaluators) is the OpenAI-compatible server at `llm_url`."""
    data_dir = tempfile.mkdtemp(prefix="runwatch-pytest-")
    web_port = free_port()
    env = {
        **os.environ,
        "RUNWATCH_DATA_DIR": data_dir,
        "RUNWATCH_WEB_PORT": str(web_port),
        "RUNWATCH_GATEWAY_PORT": str(free_port()),
        "RUNWATCH_AGENTS_PORT": str(free_port()),
        "RUNWATCH_OTLP_GRPC_PORT": str(free_port()),
        "RUNWATCH_HOST": "127.0.0.1",
        "LOG_LEVEL": "warn",
        "OPENAI_BASE_URL": llm_url,
        "OPENAI_API_KEY": "sk-test",
        "RUNWATCH_EVALUATION_POLL_MS": "100",
    }
    for k in ("KAFKA_BROKERS", "CLICKHOUSE_URL", "DATABASE_URL", "REDIS_URL"):
        env.pop(k, None)  # embedded mode: this suite tests the client, not the scale adapters
    log = Path(data_dir) / "server.log"
    log_file = log.open("w")
    proc = subprocess.Popen(
        ["node", str(CLI), "start"],
        cwd=REPO_ROOT,
        env=env,
        stdout=log_file,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    base_url = f"http://127.0.0.1:{web_port}"
    try:
        _wait_http(base_url, proc, log, timeout=180)
        srv = RealServer(base_url, "", data_dir, env)
        email = DASHBOARD_EMAIL
        srv.cli("user", "create", "--email", email, "--name", "Py Test", "--password", DASHBOARD_PASSWORD)
        srv.api_key = srv.cli("key", "create", "--email", email, "--name", "pytest").strip().splitlines()[-1].strip()
        yield srv
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        log_file.close()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def client(real_server: RealServer) -> Iterator[Runwatch]:
    """A client of the real server's key that sends every 50 ms (a test file may define its own)."""
    c = Runwatch(api_key=real_server.api_key, base_url=real_server.base_url, flush_interval=0.05)
    yield c
    c.shutdown(timeout=5)

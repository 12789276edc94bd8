"""get_prompt against a REAL Runwatch server, reached through a forwarding proxy on loopback that can hang (answers
nothing) or go down (closes its port): compile and the model config; the cache's TTL (no request while fresh);
stale-while-revalidate (the stale version at once, one background refresh, a 304 when nothing changed); a hanging
or down server answered from the cache or the caller's fallback within the timeout."""

from __future__ import annotations

import http.server
import json
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from runwatch import Prompt, PromptVariableError, Runwatch
from runwatch.errors import RunwatchError

from .conftest import RealServer

pytestmark = pytest.mark.integration


class Proxy:
    """Forwards GETs to the real server; `hang` holds every request unanswered; `down()` closes the port."""

    def __init__(self, target: str) -> None:
        proxy = self
        self.hang = threading.Event()
        self.release = threading.Event()
        self.forwarded = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if proxy.hang.is_set():
                    proxy.release.wait(10)
                    return
                proxy.forwarded += 1
                req = urllib.request.Request(target + self.path, headers=dict(self.headers))
                try:
                    with urllib.request.urlopen(req, timeout=10) as r:
                        status, headers, body = r.status, r.headers, r.read()
                except urllib.error.HTTPError as e:
                    status, headers, body = e.code, e.headers, e.read()
                self.send_response(status)
                for k in ("content-type", "etag", "cache-control"):
                    if headers.get(k):
                        self.send_header(k, headers[k])
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def down(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def _api(srv: RealServer, method: str, path: str, body: object) -> int:
    req = urllib.request.Request(
        srv.base_url + path,
        data=json.dumps(body).encode(),
        method=method,
        headers={"Authorization": f"Bearer {srv.api_key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.status


def _until(what: str, done: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


@pytest.fixture(scope="module")
def prompt_server(real_server: RealServer) -> Iterator[RealServer]:
    messages = [{"role": "system", "content": "You are {{persona}}."}, {"role": "user", "content": "{{question}}"}]
    config = {"provider": "openai", "model": "gpt-4o-mini", "parameters": {"temperature": 0.1}}
    body = {"prompt": messages, "config": config, "labels": ["production"]}
    assert _api(real_server, "POST", "/api/prompts/py-answer/versions", body) == 201
    v2 = {
        "prompt": [{**messages[0], "content": "You are {{persona}}, brief."}, messages[1]],
        "config": {"model": "gpt-4o"},
    }
    assert _api(real_server, "POST", "/api/prompts/py-answer/versions", v2) == 201
    yield real_server


def test_compiles_the_production_version_and_names_a_missing_variable(prompt_server: RealServer) -> None:
    client = Runwatch(api_key=prompt_server.api_key, base_url=prompt_server.base_url)
    prompt = client.get_prompt("py-answer")
    assert (prompt.version, prompt.type, prompt.is_fallback, prompt.labels) == (1, "chat", False, ("production",))
    assert prompt.config == {"provider": "openai", "model": "gpt-4o-mini", "parameters": {"temperature": 0.1}}
    assert prompt.compile(persona="a tutor", question={"q": "2+2?"}) == [
        {"role": "system", "content": "You are a tutor."},
        {"role": "user", "content": '{"q": "2+2?"}'},
    ]
    with pytest.raises(PromptVariableError, match="question") as err:
        prompt.compile({"persona": "x"})
    assert err.value.missing == ["question"]
    assert client.get_prompt("py-answer", version=2).config["model"] == "gpt-4o"
    assert client.get_prompt("py-answer", "latest").version == 2
    with pytest.raises(RunwatchError, match="HTTP 404"):
        client.get_prompt("nope")
    client.shutdown(timeout=5)


def test_serves_from_the_cache_then_stale_while_one_background_refresh_revalidates(prompt_server: RealServer) -> None:
    proxy = Proxy(prompt_server.base_url)
    client = Runwatch(api_key=prompt_server.api_key, base_url=proxy.url)
    first = client.get_prompt("py-answer", cache_ttl_s=0.3)
    assert first.version == 1
    for _ in range(50):
        assert client.get_prompt("py-answer", cache_ttl_s=0.3) is first
    assert client.prompt_cache.requests == 1

    # Past the TTL, unchanged: the same prompt, one revalidation answered 304.
    time.sleep(0.35)
    assert client.get_prompt("py-answer", cache_ttl_s=0.3) is first
    assert client.get_prompt("py-answer", cache_ttl_s=0.3) is first
    _until("the revalidation", lambda: client.prompt_cache.requests == 2 and proxy.forwarded == 2)
    time.sleep(0.05)
    assert client.get_prompt("py-answer", cache_ttl_s=0.3) is first

    # The label moves: the stale version at once, the new one after the background refresh.
    assert _api(prompt_server, "PUT", "/api/prompts/py-answer/labels/production", {"version": 2}) == 200
    time.sleep(0.35)
    assert client.get_prompt("py-answer", cache_ttl_s=0.3).version == 1
    _until("the new version", lambda: client.get_prompt("py-answer", cache_ttl_s=0.3).version == 2)
    assert _api(prompt_server, "PUT", "/api/prompts/py-answer/labels/production", {"version": 1}) == 200
    client.shutdown(timeout=5)
    proxy.down()


def test_never_waits_on_a_hanging_or_down_server(prompt_server: RealServer) -> None:
    proxy = Proxy(prompt_server.base_url)
    client = Runwatch(api_key=prompt_server.api_key, base_url=proxy.url)
    cached = client.get_prompt("py-answer", cache_ttl_s=0)
    proxy.hang.set()
    started = time.perf_counter()
    for _ in range(20):
        assert client.get_prompt("py-answer", cache_ttl_s=0, timeout_s=5) is cached
    assert time.perf_counter() - started < 0.1
    assert client.prompt_cache.requests == 2  # one refresh in flight at most

    started = time.perf_counter()
    fb = client.get_prompt("other", fallback="Hello {{who}}", timeout_s=0.3)
    waited = time.perf_counter() - started
    assert (fb.is_fallback, fb.version, fb.compile(who="you")) == (True, None, "Hello you")
    assert 0.25 <= waited < 1.5
    with pytest.raises(RunwatchError):
        client.get_prompt("other", timeout_s=0.2)

    proxy.down()
    assert client.get_prompt("py-answer", cache_ttl_s=0) is cached
    started = time.perf_counter()
    fallback = {"prompt": [{"role": "user", "content": "{{q}}"}], "config": {"model": "local"}}
    down = client.get_prompt("py-answer", "staging", fallback=fallback)
    assert time.perf_counter() - started < 1.0
    assert isinstance(down, Prompt)
    assert (down.is_fallback, down.config["model"], down.compile(q="hi")) == (
        True,
        "local",
        [{"role": "user", "content": "hi"}],
    )
    client.shutdown(timeout=5)


def test_an_llm_call_records_the_prompt_version_it_used(prompt_server: RealServer) -> None:
    client = Runwatch(api_key=prompt_server.api_key, base_url=prompt_server.base_url, flush_interval=0.05)
    prompt = client.get_prompt("py-answer")
    fallback = client.get_prompt("py-missing", fallback="Hi")
    for run_id, p in (("py-prompt-run", prompt), ("py-fallback-run", fallback)):
        with (
            client.run("py-bot", sdk_run_id=run_id) as run,
            run.llm_call("answer", model="gpt-4o-mini", prompt=p) as call,
        ):
            call.set_output("4")
            call.set_usage(prompt_tokens=10, completion_tokens=1)
    assert client.flush(10)
    sql = (
        "SELECT sdk_run_id, prompt_name, prompt_version FROM llm_calls WHERE sdk_run_id LIKE 'py-%' ORDER BY sdk_run_id"
    )
    rows: list[list[object]] = []

    def stored() -> bool:
        req = urllib.request.Request(
            prompt_server.base_url + "/api/query",
            data=json.dumps({"sql": sql}).encode(),
            headers={"Authorization": f"Bearer {prompt_server.api_key}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=30) as r:
            rows[:] = json.loads(r.read())["rows"]
        return len(rows) == 2

    _until("both calls stored", stored, timeout=30)
    assert [[r[0], r[1], int(str(r[2]))] for r in rows] == [
        ["py-fallback-run", "", 0],
        ["py-prompt-run", "py-answer", prompt.version],
    ]
    client.shutdown(timeout=5)


def test_an_experiment_names_the_prompt_version_its_task_uses(prompt_server: RealServer) -> None:
    client = Runwatch(api_key=prompt_server.api_key, base_url=prompt_server.base_url)
    try:
        dataset = f"py prompt set {time.time_ns()}"
        client.create_dataset(dataset)
        client.add_dataset_items(dataset, [{"id": f"q{i}", "input": {"question": f"q{i}"}} for i in range(3)])
        ids = {}
        for version in (1, 2):
            prompt = client.get_prompt("py-answer", version=version)

            def task_of(prompt: Prompt) -> Callable[[Any], Any]:
                return lambda inp: prompt.compile(persona="a tester", question=inp["question"])[0]["content"]

            def brief(*, output: Any, **_: Any) -> int:
                return 1 if "brief" in output else 0

            summary = client.run_experiment(
                dataset=dataset, name=f"v{version}", task=task_of(prompt), evaluators=[brief], prompt=prompt
            )
            assert summary.scores["brief"]["mean"] == (version - 1)
            ids[version] = summary.experiment_id
        for version, experiment_id in ids.items():
            status, body = prompt_server.get(f"/api/experiments/{experiment_id}")
            assert status == 200
            assert (body["experiment"]["prompt_name"], body["experiment"]["prompt_version"]) == ("py-answer", version)

        fallback = Prompt(name="py-answer", version=None, prompt="x", is_fallback=True)
        with pytest.raises(ValueError, match="fallback"):
            client.run_experiment(dataset=dataset, name="fallback", task=lambda inp: "x", prompt=fallback)
    finally:
        client.shutdown()

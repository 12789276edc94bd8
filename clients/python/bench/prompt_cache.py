"""Cost of client.get_prompt on the agent's thread (docs/PROMPTS.md): from a fresh cache entry, and from a stale one
(cache_ttl_s=0: every call is past the TTL and returns the cached prompt while one background refresh at a time
revalidates it against the server — a 304 each).

    clients/python/.venv/bin/python clients/python/bench/prompt_cache.py [--calls 200000]

A real server (`runwatch start` on a temporary data dir, as the test suite starts it) answers the first fetch and
the refreshes. Prints the mean and the p50/p99 of single calls, and how many requests reached the server.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.conftest import running_server  # noqa: E402

from runwatch import Runwatch  # noqa: E402


def measure(label: str, calls: int, fn: object) -> None:
    single: list[float] = []
    started = time.perf_counter()
    for i in range(calls):
        if i % 100 == 0:
            t0 = time.perf_counter()
            fn()  # type: ignore[operator]
            single.append(time.perf_counter() - t0)
        else:
            fn()  # type: ignore[operator]
    total = time.perf_counter() - started
    single.sort()
    p = lambda q: single[min(len(single) - 1, int(q * len(single)))] * 1e6  # noqa: E731
    print(f"{label:<34} mean {total / calls * 1e6:6.2f} µs   p50 {p(0.5):6.2f} µs   p99 {p(0.99):6.2f} µs")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200_000)
    args = parser.parse_args()
    with running_server("http://127.0.0.1:9") as srv:
        body = {
            "prompt": [{"role": "system", "content": "You are {{persona}}."}, {"role": "user", "content": "{{q}}"}],
            "labels": ["production"],
        }
        req = urllib.request.Request(
            srv.base_url + "/api/prompts/bench/versions",
            data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {srv.api_key}", "Content-Type": "application/json"},
        )
        urllib.request.urlopen(req, timeout=30).close()
        client = Runwatch(api_key=srv.api_key, base_url=srv.base_url)
        client.get_prompt("bench")
        measure("fresh entry (ttl 60 s)", args.calls, lambda: client.get_prompt("bench"))
        before = client.prompt_cache.requests
        measure("stale entry (ttl 0, refreshing)", args.calls, lambda: client.get_prompt("bench", cache_ttl_s=0))
        print(f"requests during the stale run: {client.prompt_cache.requests - before}")
        prompt = client.get_prompt("bench")
        measure("compile(persona, q)", args.calls // 4, lambda: prompt.compile(persona="a tutor", q="2+2?"))
        client.shutdown(timeout=5)


if __name__ == "__main__":
    main()

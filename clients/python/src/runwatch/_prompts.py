"""Prompts (docs/PROMPTS.md): `client.get_prompt(name, label="production")` returns a Prompt to `compile(**vars)`,
with its model config. An agent must never fail or wait because Runwatch is slow or down, so:

- answers are cached in the process for `cache_ttl_s` (default 60 s); a fresh entry is returned without a request;
- a stale entry is returned at once and refreshed once in a background thread (stale-while-revalidate), revalidated
  with the server's ETag (a 304 costs no body); a failed refresh keeps the stale entry;
- without an entry, one request with a short timeout (`timeout_s`, default 2 s) — callers for the same prompt at
  once share it — and when it fails, the caller's `fallback` (a Prompt with `is_fallback`) or a RunwatchError.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ._http import HttpClient, TransportError
from .errors import RunwatchError

if TYPE_CHECKING:
    from .client import Runwatch

_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}")


class PromptVariableError(RunwatchError, KeyError):
    """compile() was not given every variable the prompt names; `missing` lists them."""

    def __init__(self, prompt: str, missing: list[str]) -> None:
        plural = "s" if len(missing) > 1 else ""
        super().__init__(f"prompt {prompt!r} needs variable{plural} {', '.join(missing)}: pass them to compile()")
        self.missing = missing

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0]


def prompt_variables(content: Any) -> list[str]:
    """The variables a prompt names, each once, in the order they first appear."""
    texts = [content] if isinstance(content, str) else [m.get("content", "") for m in content]
    seen: dict[str, None] = {}
    for text in texts:
        for m in _VARIABLE.finditer(text):
            seen.setdefault(m.group(1), None)
    return list(seen)


@dataclass(frozen=True)
class Prompt:
    name: str
    version: int | None  # None for a fallback
    prompt: Any  # the text, or a list of {"role", "content"} messages
    config: dict[str, Any] = field(default_factory=dict)
    labels: tuple[str, ...] = ()
    is_fallback: bool = False

    @property
    def type(self) -> str:
        return "text" if isinstance(self.prompt, str) else "chat"

    @property
    def variables(self) -> list[str]:
        return prompt_variables(self.prompt)

    def compile(self, variables: Mapping[str, Any] | None = None, **kwargs: Any) -> Any:
        """The prompt with its `{{variables}}` filled in (values that are not strings as JSON); raises
        PromptVariableError naming every missing one."""
        values = {**(variables or {}), **kwargs}
        missing = [v for v in self.variables if v not in values]
        if missing:
            raise PromptVariableError(self.name, missing)

        def fill(text: str) -> str:
            def one(m: re.Match[str]) -> str:
                v = values[m.group(1)]
                return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)

            return _VARIABLE.sub(one, text)

        if isinstance(self.prompt, str):
            return fill(self.prompt)
        return [{**m, "content": fill(m.get("content", ""))} for m in self.prompt]

    @property
    def reference(self) -> dict[str, Any]:
        """What an LLM span records to link the call to this version."""
        return {"name": self.name, "version": self.version}


@dataclass
class _Entry:
    prompt: Prompt
    etag: str | None
    fetched_at: float
    refreshing: bool = False


class PromptCache:
    def __init__(self, client: Runwatch) -> None:
        self._client = client
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()
        self._first: dict[str, threading.Event] = {}
        #: Requests made (for tests and benchmarks): first fetches and background refreshes.
        self.requests = 0

    def get(
        self,
        name: str,
        *,
        label: str | None = None,
        version: int | None = None,
        fallback: Any = None,
        cache_ttl_s: float = 60.0,
        timeout_s: float = 2.0,
    ) -> Prompt:
        query = f"version={int(version)}" if version is not None else f"label={quote(label or 'production', safe='')}"
        key = f"{name}?{query}"
        while True:
            with self._lock:
                entry = self._entries.get(key)
                if entry is not None:
                    if time.monotonic() - entry.fetched_at >= max(0.0, cache_ttl_s) and not entry.refreshing:
                        entry.refreshing = True
                        threading.Thread(
                            target=self._refresh, args=(key, name, query, entry, timeout_s), daemon=True
                        ).start()
                    return entry.prompt
                waiting = self._first.get(key)
                if waiting is None:
                    self._first[key] = threading.Event()
                    break
            # Another caller is fetching this prompt: share its answer (or its failure) within the timeout.
            if not waiting.wait(timeout_s) or key not in self._entries:
                return self._fallback(name, fallback, RunwatchError(f"prompt {name!r} could not be fetched"))
        try:
            fetched = self._fetch(name, query, None, timeout_s)
            assert fetched is not None
            with self._lock:
                self._entries[key] = fetched
            return fetched.prompt
        except RunwatchError as e:
            return self._fallback(name, fallback, e)
        finally:
            with self._lock:
                self._first.pop(key).set()

    @staticmethod
    def _fallback(name: str, fallback: Any, error: RunwatchError) -> Prompt:
        if fallback is None:
            raise error
        if isinstance(fallback, Mapping):
            return Prompt(name, None, fallback["prompt"], dict(fallback.get("config") or {}), (), True)
        return Prompt(name, None, fallback, {}, (), True)

    def _refresh(self, key: str, name: str, query: str, entry: _Entry, timeout_s: float) -> None:
        try:
            fresh = self._fetch(name, query, entry.etag, timeout_s)
            with self._lock:
                if fresh is None:
                    entry.fetched_at = time.monotonic()
                else:
                    self._entries[key] = fresh
        except RunwatchError:
            pass  # keep serving the stale entry; the next call past the TTL tries again
        finally:
            entry.refreshing = False

    def _fetch(self, name: str, query: str, etag: str | None, timeout_s: float) -> _Entry | None:
        """One request; None when the server answered 304 (the entry holds)."""
        client = self._client
        if not client.enabled or not client.api_key:
            raise RunwatchError(f"Runwatch is disabled (no API key); cannot get prompt {name!r}")
        path = f"/api/prompts/{quote(name, safe='')}?{query}"
        self.requests += 1
        http = HttpClient(client.base_url, client.api_key, timeout_s)
        try:
            resp = http.request("GET", path, headers={"If-None-Match": etag} if etag else None)
        except TransportError as e:
            raise RunwatchError(f"GET {path} failed ({e})") from e
        finally:
            http.close()
        if resp.status == 304:
            return None
        if resp.status != 200:
            text = resp.body[:500].decode("utf-8", "replace")
            raise RunwatchError(f"GET {path} was refused (HTTP {resp.status}): {text}", status=resp.status)
        w = resp.json()["prompt"]
        prompt = Prompt(w["name"], w["version"], w["prompt"], w.get("config") or {}, tuple(w.get("labels") or ()))
        return _Entry(prompt, resp.header("etag"), time.monotonic())

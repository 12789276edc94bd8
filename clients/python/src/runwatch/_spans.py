"""Spans of a run: steps, tool calls and LLM calls. Each sends a start and an end event (with duration, output or
error) carrying its span_id and the span it nests in: by default the span entered around it in this context."""

from __future__ import annotations

import itertools
import os
import time
from contextvars import Token
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from ._context import UNSET, _current_span
from ._json import deferred_jsonable, deferred_preview, preview

if TYPE_CHECKING:
    from ._run import Run

_S = TypeVar("_S", bound="_Span")

# Span ids need only be unique within a run: a random per-process prefix and a counter (cheaper than a uuid4,
# which reads the OS's random source each time). The prefix is renewed in a forked child.
_prefix = os.urandom(6).hex()
_counter = itertools.count(1)


def _renew_prefix() -> None:
    global _prefix, _counter
    _prefix = os.urandom(6).hex()
    _counter = itertools.count(1)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_renew_prefix)


def new_span_id() -> str:
    return f"{_prefix}-{next(_counter):x}"


class _Span:
    """Shared ids, timing and start/end events (subclasses fill in the payloads)."""

    event_type: str  # "step" or "tool_call"
    run: Run
    span_id: str
    parent_span_id: str | None
    _input: Any
    _t0: float | None = None
    _done = False
    _output: Any = UNSET
    _token: Token[_Span | None] | None = None

    def _init_span(self, run: Run, span_id: str | None, parent_span_id: Any) -> None:
        self.run = run
        self.span_id = span_id or new_span_id()
        if parent_span_id is UNSET:
            parent = _current_span.get()
            parent_span_id = parent.span_id if parent is not None and parent.run is run else None
        self.parent_span_id = parent_span_id or None

    def set_output(self, output: Any) -> None:
        self._output = output

    def _duration_ms(self) -> int:
        return max(0, round((time.perf_counter() - self._t0) * 1000)) if self._t0 is not None else 0

    def _name_field(self) -> dict[str, Any]:  # pragma: no cover - overridden
        raise NotImplementedError

    def _add_input(self, payload: dict[str, Any]) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def _add_result(self, payload: dict[str, Any], error: BaseException | None) -> None:  # pragma: no cover
        raise NotImplementedError

    def _emit(self, payload: dict[str, Any]) -> None:
        self.run.emit(self.event_type, payload, span_id=self.span_id, parent_span_id=self.parent_span_id)

    def start(self: _S) -> _S:
        if self._t0 is None:
            self._t0 = time.perf_counter()
            payload: dict[str, Any] = {**self._name_field(), "phase": "start"}
            if self._input is not UNSET:
                self._add_input(payload)
            self._emit(payload)
        return self

    def end(self, output: Any = UNSET, *, error: BaseException | None = None) -> None:
        if self._done:
            return
        self._done = True
        if output is not UNSET:
            self._output = output
        payload: dict[str, Any] = {**self._name_field(), "phase": "end", "duration_ms": self._duration_ms()}
        self._add_result(payload, error)
        self._emit(payload)

    def _enter(self: _S) -> _S:
        self.start()
        self._token = _current_span.set(self)
        return self

    def _exit(self, exc: BaseException | None) -> Literal[False]:
        if self._token is not None:
            try:
                _current_span.reset(self._token)
            except ValueError:  # pragma: no cover - left in another context
                pass
            self._token = None
        self.end(error=exc)
        return False

    def __enter__(self: _S) -> _S:
        return self._enter()

    def __exit__(self, et: type[BaseException] | None, exc: BaseException | None, tb: Any) -> Literal[False]:
        return self._exit(exc)

    async def __aenter__(self: _S) -> _S:
        return self._enter()

    async def __aexit__(self, et: type[BaseException] | None, exc: BaseException | None, tb: Any) -> Literal[False]:
        return self._exit(exc)


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:2000]


class Step(_Span):
    event_type = "step"

    def __init__(
        self, run: Run, node_name: str, input: Any = UNSET, *, span_id: str | None = None, parent_span_id: Any = UNSET
    ) -> None:
        self._init_span(run, span_id, parent_span_id)
        self.node_name = node_name
        self._input = input

    def _name_field(self) -> dict[str, Any]:
        return {"node_name": self.node_name}

    def _add_input(self, payload: dict[str, Any]) -> None:
        payload["input"] = deferred_jsonable(self._input)

    def _add_result(self, payload: dict[str, Any], error: BaseException | None) -> None:
        if self._output is not UNSET:
            payload["output"] = deferred_jsonable(self._output)
        if error is not None:
            payload["error"] = _error_text(error)


class ToolCall(_Span):
    event_type = "tool_call"

    def __init__(
        self, run: Run, tool_name: str, input: Any = UNSET, *, span_id: str | None = None, parent_span_id: Any = UNSET
    ) -> None:
        self._init_span(run, span_id, parent_span_id)
        self.tool_name = tool_name
        self._input = input

    def _name_field(self) -> dict[str, Any]:
        return {"tool_name": self.tool_name}

    def _add_input(self, payload: dict[str, Any]) -> None:
        payload["input_preview"] = deferred_preview(self._input)

    def _add_result(self, payload: dict[str, Any], error: BaseException | None) -> None:
        if error is not None:
            payload["error"] = _error_text(error)
            payload["output_preview"] = preview(payload["error"])
        elif self._output is not UNSET:
            payload["output_preview"] = deferred_preview(self._output)


_USAGE_FIELDS = (
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "cached_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)


class LlmCall(Step):
    """A model call: a step of kind "llm" with its model, provider, token usage, cost, messages and answer."""

    def __init__(
        self,
        run: Run,
        name: str = "llm",
        *,
        model: str | None = None,
        provider: str | None = None,
        input: Any = UNSET,
        span_id: str | None = None,
        parent_span_id: Any = UNSET,
        prompt: Any = None,
    ) -> None:
        super().__init__(run, name, input, span_id=span_id, parent_span_id=parent_span_id)
        self.model = model
        self.provider = provider
        # The prompt version used (a Prompt from get_prompt; a fallback, whose version is None, is not recorded).
        self.prompt = prompt
        self.usage: dict[str, int] = {}
        self.cost_usd: float | None = None
        self.finish_reason: str | None = None

    def set_usage(
        self,
        *,
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
        total_tokens: int | None = None,
        cached_tokens: int | None = None,
        cache_write_tokens: int | None = None,
        reasoning_tokens: int | None = None,
        cost_usd: float | None = None,
        model: str | None = None,
        provider: str | None = None,
    ) -> None:
        """Token counts as the provider reports them (cached and cache-write are parts of prompt_tokens, reasoning
        a part of completion_tokens). Without cost_usd, Runwatch prices the call from its model and provider."""
        given = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": total_tokens,
            "cached_tokens": cached_tokens,
            "cache_write_tokens": cache_write_tokens,
            "reasoning_tokens": reasoning_tokens,
        }
        for k, v in given.items():
            if v is not None and v >= 0:
                self.usage[k] = int(v)
        if cost_usd is not None and cost_usd >= 0:
            self.cost_usd = float(cost_usd)
        if model:
            self.model = model
        if provider:
            self.provider = provider

    def _name_field(self) -> dict[str, Any]:
        fields: dict[str, Any] = {"node_name": self.node_name, "kind": "llm"}
        if self.model:
            fields["model"] = self.model
        if self.provider:
            fields["provider"] = self.provider
        return fields

    def _add_result(self, payload: dict[str, Any], error: BaseException | None) -> None:
        super()._add_result(payload, error)
        for k in _USAGE_FIELDS:
            if k in self.usage:
                payload[k] = self.usage[k]
        if self.cost_usd is not None:
            payload["cost_usd"] = self.cost_usd
        if self.finish_reason:
            payload["finish_reason"] = self.finish_reason
        name, version = getattr(self.prompt, "name", None), getattr(self.prompt, "version", None)
        if name and isinstance(version, int) and version >= 1:
            payload["prompt_name"], payload["prompt_version"] = name, version

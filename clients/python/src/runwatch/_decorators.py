"""The client's decorators (trace_run, tool, step) and how they wrap sync and async functions in spans."""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast, overload

from ._attributes import (
    MAX_END_USER_CHARS,
    MAX_ENVIRONMENT_CHARS,
    MAX_RELEASE_CHARS,
    label,
    metadata_dict,
    tag_list,
)
from ._context import UNSET, F, _current_run

if TYPE_CHECKING:
    from ._run import Run
    from ._spans import Step, ToolCall
    from .client import Runwatch

logger = logging.getLogger("runwatch")


def _bound_arguments(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        bound = inspect.signature(fn).bind_partial(*args, **kwargs)
        return {k: v for k, v in bound.arguments.items() if k not in ("self", "cls")}
    except (TypeError, ValueError):
        return {"args": list(args), "kwargs": kwargs}


def _wrap(fn: F, open_span: Callable[[tuple[Any, ...], dict[str, Any]], Any], capture_output: bool) -> F:
    """Wraps a sync or async function so that each call runs inside the span open_span returns (or none)."""

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            span = _safe_open(open_span, args, kwargs)
            if span is None:
                return await fn(*args, **kwargs)
            async with span:
                result = await fn(*args, **kwargs)
                if capture_output:
                    span.set_output(result)
                return result

        return async_wrapper  # type: ignore[return-value]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        span = _safe_open(open_span, args, kwargs)
        if span is None:
            return fn(*args, **kwargs)
        with span:
            result = fn(*args, **kwargs)
            if capture_output:
                span.set_output(result)
            return result

    return wrapper  # type: ignore[return-value]


def _safe_open(open_span: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        return open_span(args, kwargs)
    except Exception:  # pragma: no cover - instrumentation must not break the call
        logger.debug("runwatch: could not open a span", exc_info=True)
        return None


class ToolDecorator:
    """The `tool` decorator, for a class that says where each call's tool call opens (_open_tool_call)."""

    def _open_tool_call(self, tool_name: str, input_of: Callable[[], Any]) -> ToolCall | None:
        raise NotImplementedError

    @overload
    def tool(self, fn: F, /) -> F: ...
    @overload
    def tool(self, fn: None = None, /, *, name: str | None = None) -> Callable[[F], F]: ...

    def tool(self, fn: Any = None, /, *, name: str | None = None) -> Any:
        """Decorator: each call of the function is a tool call (of the current run, or of this run)."""

        def decorate(f: F) -> F:
            tool_name = name or f.__name__
            return _wrap(f, lambda a, k: self._open_tool_call(tool_name, lambda: _bound_arguments(f, a, k)), True)

        return decorate(fn) if fn is not None else decorate


class Decorators(ToolDecorator):
    """The decorators of the client (a base of Runwatch)."""

    def trace_run(
        self,
        agent_name: str | None = None,
        *,
        framework: str | None = None,
        capture_input: bool = True,
        capture_output: bool = True,
        tags: str | Iterable[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        end_user: str | None = None,
        environment: str | None = None,
        release: str | None = None,
    ) -> Callable[[F], F]:
        """Decorator: each call of the function is a run with these tags, metadata, end user, environment and release
        (see Runwatch.run). Inside another run it is a step of that run, and its tags and metadata are added to it."""
        client = cast("Runwatch", self)
        # Checked once, here: a mistake raises TypeError where the decorator is written, not at each call.
        run_tags, run_metadata = tag_list(tags), metadata_dict(metadata)
        labels = {
            "end_user": label(end_user, MAX_END_USER_CHARS, "end_user"),
            "environment": label(environment, MAX_ENVIRONMENT_CHARS, "environment"),
            "release": label(release, MAX_RELEASE_CHARS, "release"),
        }

        def decorate(fn: F) -> F:
            name = agent_name or fn.__name__

            def open_span(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Run | Step:
                inp = _bound_arguments(fn, args, kwargs) if capture_input else UNSET
                parent = _current_run.get()
                if parent is not None and parent.client is client:
                    if run_tags:
                        parent.add_tags(*run_tags)
                    if run_metadata:
                        parent.set_metadata(run_metadata)
                    return parent.step(name, input=inp)
                return client.run(name, inp, framework=framework, tags=run_tags, metadata=run_metadata, **labels)

            return _wrap(fn, open_span, capture_output)

        return decorate

    def _open_tool_call(self, tool_name: str, input_of: Callable[[], Any]) -> ToolCall | None:
        """A tool call of the current run; None (a plain call) outside a run."""
        run = _current_run.get()
        return run.tool_call(tool_name, input=input_of()) if run is not None else None

    def step(self, name: str | None = None) -> Callable[[F], F]:
        """Decorator: calls of the function are steps of the current run (plain calls outside a run)."""

        def decorate(f: F) -> F:
            node = name or f.__name__

            def open_span(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Step | None:
                run = _current_run.get()
                return None if run is None else run.step(node)

            return _wrap(f, open_span, True)

        return decorate

"""How the decorators (trace_run, tool, step) wrap sync and async functions in spans."""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any

from ._context import F

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

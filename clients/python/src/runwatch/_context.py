"""What the client's modules share: the UNSET marker, the run current in this context, error payloads."""

from __future__ import annotations

import traceback as tb_module
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ._run import Run
    from ._spans import _Span

F = TypeVar("F", bound=Callable[..., Any])


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()

_current_run: ContextVar[Run | None] = ContextVar("runwatch_current_run", default=None)
# The span entered most recently in this context: a new span of the same run nests in it.
_current_span: ContextVar[_Span | None] = ContextVar("runwatch_current_span", default=None)


def current_run() -> Run | None:
    """The run entered most recently in this context (thread / asyncio task), if any."""
    return _current_run.get()


def _format_traceback(exc: BaseException) -> str:
    return "".join(tb_module.format_exception(type(exc), exc, exc.__traceback__))


def error_payload(exc: BaseException) -> dict[str, Any]:
    return {
        "error_type": type(exc).__name__,
        "error_message": str(exc)[:4000],
        "traceback": _format_traceback(exc)[-16_000:],
    }

"""Steps and tool calls: spans of a run that send a start and an end event (with duration, output or error)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from ._context import UNSET
from ._json import preview, to_jsonable

if TYPE_CHECKING:
    from ._run import Run

_S = TypeVar("_S", bound="_Span")


class _Span:
    """Shared timing and start/end events for steps and tool calls (subclasses fill in the payloads)."""

    event_type: str  # "step" or "tool_call"
    run: Run
    _input: Any
    _t0: float | None = None
    _done = False
    _output: Any = UNSET

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

    def start(self: _S) -> _S:
        if self._t0 is None:
            self._t0 = time.perf_counter()
            payload: dict[str, Any] = {**self._name_field(), "phase": "start"}
            if self._input is not UNSET:
                self._add_input(payload)
            self.run.emit(self.event_type, payload)
        return self

    def end(self, output: Any = UNSET, *, error: BaseException | None = None) -> None:
        if self._done:
            return
        self._done = True
        if output is not UNSET:
            self._output = output
        payload: dict[str, Any] = {**self._name_field(), "phase": "end", "duration_ms": self._duration_ms()}
        self._add_result(payload, error)
        self.run.emit(self.event_type, payload)

    def __enter__(self: _S) -> _S:
        return self.start()

    def __exit__(self, et: type[BaseException] | None, exc: BaseException | None, tb: Any) -> Literal[False]:
        self.end(error=exc)
        return False

    async def __aenter__(self: _S) -> _S:
        return self.start()

    async def __aexit__(self, et: type[BaseException] | None, exc: BaseException | None, tb: Any) -> Literal[False]:
        self.end(error=exc)
        return False


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:2000]


class Step(_Span):
    event_type = "step"

    def __init__(self, run: Run, node_name: str, input: Any = UNSET) -> None:
        self.run = run
        self.node_name = node_name
        self._input = input

    def _name_field(self) -> dict[str, Any]:
        return {"node_name": self.node_name}

    def _add_input(self, payload: dict[str, Any]) -> None:
        payload["input"] = to_jsonable(self._input)

    def _add_result(self, payload: dict[str, Any], error: BaseException | None) -> None:
        if self._output is not UNSET:
            payload["output"] = to_jsonable(self._output)
        if error is not None:
            payload["error"] = _error_text(error)


class ToolCall(_Span):
    event_type = "tool_call"

    def __init__(self, run: Run, tool_name: str, input: Any = UNSET) -> None:
        self.run = run
        self.tool_name = tool_name
        self._input = input

    def _name_field(self) -> dict[str, Any]:
        return {"tool_name": self.tool_name}

    def _add_input(self, payload: dict[str, Any]) -> None:
        payload["input_preview"] = preview(self._input)

    def _add_result(self, payload: dict[str, Any], error: BaseException | None) -> None:
        if error is not None:
            payload["error"] = _error_text(error)
            payload["output_preview"] = preview(payload["error"])
        elif self._output is not UNSET:
            payload["output_preview"] = preview(self._output)
